//! TEMPORARY STUB
use std::borrow::Cow;
pub struct Redactor;
impl Redactor {
    pub fn redact<'a>(&self, t: &'a str) -> (Cow<'a, str>, usize) {
        (Cow::Borrowed(t), 0)
    }
}
pub fn redactor() -> &'static Redactor {
    &Redactor
}
pub fn drop_private(t: &str) -> Cow<'_, str> {
    Cow::Borrowed(t)
}
pub fn is_sensitive_path(_p: &str) -> bool {
    false
}
pub fn command_touches_sensitive_path(_c: &str) -> bool {
    false
}
