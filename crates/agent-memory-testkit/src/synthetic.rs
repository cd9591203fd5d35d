//! Synthetic text for the benchmarks: a deterministic generator and a vocabulary of made-up
//! English-like words, so every run fills its store with the same text.

/// A small deterministic generator: the same sequence every run.
#[derive(Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n
    }

    /// A word, skewed towards the first ones, as real text is.
    pub fn word<'a>(&mut self, words: &'a [String]) -> &'a str {
        let a = self.below(words.len());
        let b = self.below(words.len());
        &words[a.min(b)]
    }
}

/// 1,600 words made of syllables (`papa`, `cachestoing`, …).
pub fn vocabulary() -> Vec<String> {
    let syllables = [
        "pa", "ser", "dep", "th", "to", "ken", "lex", "cache", "sto", "re", "que", "ry", "in",
        "dex", "mi", "gra", "te", "hook", "spo", "ol",
    ];
    let mut words = Vec::new();
    for a in syllables {
        for b in syllables {
            for c in ["", "r", "s", "ing"] {
                words.push(format!("{a}{b}{c}"));
            }
        }
    }
    words
}
