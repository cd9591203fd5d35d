//! A JSON value that keeps its objects' keys in file order, so that an agent's config comes
//! back from an edit with every key where the user put it, printed in the file's own indent.
//!
//! Must not: know any agent's keys; that is the parent's and the agent modules' business.

use std::fmt;
use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::{ConfigError, shape};

/// A JSON value; objects are ordered lists of members.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    pub fn parse(text: &str) -> Result<Json, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// Pretty-printed with the indentation `original` uses (two spaces when it has none), and
    /// with a final newline when `original` had one (or was empty).
    pub fn to_text(&self, original: &str) -> String {
        let indent = detect_indent(original);
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        // Serializing a tree of strings and numbers into memory cannot fail.
        let _ = self.serialize(&mut ser);
        let mut text = String::from_utf8(out).unwrap_or_default();
        if original.trim().is_empty() || original.ends_with('\n') {
            text.push('\n');
        }
        text
    }

    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        match self {
            Json::Object(members) => members.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Removes a member of an object (every member of that name).
    pub fn remove(&mut self, key: &str) {
        if let Json::Object(members) = self {
            members.retain(|(k, _)| k != key);
        }
    }

    /// Sets a member of an object in place, or appends it.
    pub fn set(&mut self, key: &str, value: Json) {
        if let Json::Object(members) = self {
            match members.iter_mut().find(|(k, _)| k == key) {
                Some((_, v)) => *v = value,
                None => members.push((key.to_owned(), value)),
            }
        }
    }

    /// The object under `key`, created empty when missing; an error naming the key when it is
    /// something else.
    pub fn object_entry(&mut self, path: &Path, key: &str) -> Result<&mut Json, ConfigError> {
        if self.get(key).is_none() {
            self.set(key, Json::Object(Vec::new()));
        }
        match self.get_mut(key) {
            Some(value @ Json::Object(_)) => Ok(value),
            _ => Err(shape(path, key, "an object")),
        }
    }

    /// The array under `key`, created empty when missing; `shown` names it in errors.
    pub fn array_entry(
        &mut self,
        path: &Path,
        key: &str,
        shown: &str,
    ) -> Result<&mut Vec<Json>, ConfigError> {
        if self.get(key).is_none() {
            self.set(key, Json::Array(Vec::new()));
        }
        match self.get_mut(key) {
            Some(Json::Array(items)) => Ok(items),
            _ => Err(shape(path, shown, "an array")),
        }
    }

    pub fn str(s: &str) -> Json {
        Json::String(s.to_owned())
    }

    pub fn uint(n: u64) -> Json {
        Json::Number(n.into())
    }

    /// Converts to serde_json's value (whose objects sort their keys).
    pub fn to_value(&self) -> serde_json::Value {
        match self {
            Json::Null => serde_json::Value::Null,
            Json::Bool(b) => serde_json::Value::Bool(*b),
            Json::Number(n) => serde_json::Value::Number(n.clone()),
            Json::String(s) => serde_json::Value::String(s.clone()),
            Json::Array(items) => {
                serde_json::Value::Array(items.iter().map(Json::to_value).collect())
            }
            Json::Object(members) => serde_json::Value::Object(
                members.iter().map(|(k, v)| (k.clone(), v.to_value())).collect(),
            ),
        }
    }
}

/// The whitespace before the first indented line, when it is spaces or one tab.
fn detect_indent(text: &str) -> String {
    for line in text.lines().skip(1) {
        let ws: String = line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
        if ws.is_empty() || ws.len() == line.len() {
            continue;
        }
        if ws.starts_with('\t') {
            return "\t".to_owned();
        }
        return ws;
    }
    "  ".to_owned()
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => s.serialize_unit(),
            Json::Bool(b) => s.serialize_bool(*b),
            Json::Number(n) => n.serialize(s),
            Json::String(v) => s.serialize_str(v),
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
        serde_json::Number::from_f64(v).map(Json::Number).ok_or_else(|| E::custom("not a number"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
        Ok(Json::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Json, E> {
        Ok(Json::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut members = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Json>()? {
            members.push((k, v));
        }
        Ok(Json::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_order_and_indent() {
        for text in [
            "{\n  \"z\": 1,\n  \"a\": [\n    true,\n    null\n  ],\n  \"m\": {}\n}\n",
            "{\n    \"b\": \"x\",\n    \"a\": 1.5\n}",
            "{\n\t\"k\": {\n\t\t\"j\": -3\n\t}\n}\n",
        ] {
            let value = Json::parse(text).expect("parse");
            assert_eq!(value.to_text(text), text);
        }
    }
}
