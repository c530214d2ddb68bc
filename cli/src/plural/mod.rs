//! English plurals for resource names, ported from `github.com/gobuffalo/flect`'s `Pluralize`.
//!
//! Kubebuilder derives a kind's plural (its REST resource name, e.g. `brokers`) as
//! `flect.Pluralize(strings.ToLower(kind))`; kbr does the same so a project scaffolded by either
//! tool gets the same CRD names. The algorithm, in order:
//! 1. a known acronym (`DNS`, `ID`, `URL`, …) gets `s`, or `es` after an `s`;
//! 2. a word that is already a known plural stays as it is;
//! 3. a dictionary word takes its irregular plural (`person` -> `people`, `child` -> `children`,
//!    uncountables like `equipment` stay);
//! 4. the first matching suffix rule applies: dictionary words as suffixes of compounds, then
//!    the suffix list (`-f`/`-fe` -> `-ves` where flect does, consonant + `y` -> `-ies`,
//!    `-s`/`-x`/`-z`/`-ch`/`-sh` -> `-es`, `-is` -> `-es` for some endings, `-um` -> `-a`, …);
//!    a word ending in a known plural suffix is left alone;
//! 5. a word ending in `s` stays; anything else gets `s`.
//!
//! `--plural` overrides the result.

mod rules;

use rules::{ACRONYMS, DICTIONARY, SUFFIXES};

/// A suffix rule: a word ending in `suffix` becomes `<stem>replacement`, or stays as it is when
/// `replacement` is `None` (it already ends in a plural suffix).
struct Rule {
    suffix: &'static str,
    replacement: Option<&'static str>,
}

/// The suffix rules in priority order: non-exact dictionary words (last entry first), then the
/// suffix list; each pair's plural-already check precedes its singular rule.
fn rules() -> impl Iterator<Item = Rule> {
    let from_dictionary = DICTIONARY.iter().rev().filter(|word| !word.exact);
    let dictionary_rules = from_dictionary.flat_map(|word| {
        [
            Rule {
                suffix: word.plural,
                replacement: None,
            },
            Rule {
                suffix: word.singular,
                replacement: Some(word.plural),
            },
        ]
    });
    let suffix_rules = SUFFIXES.iter().flat_map(|&(singular, plural)| {
        [
            Rule {
                suffix: plural,
                replacement: None,
            },
            Rule {
                suffix: singular,
                replacement: Some(plural),
            },
        ]
    });
    dictionary_rules.chain(suffix_rules)
}

/// The plural of `word` by flect's rules (see the module docs), e.g. `broker` -> `brokers`,
/// `policy` -> `policies`, `person` -> `people`. Kubebuilder calls it with the lower-cased kind.
pub fn pluralize(word: &str) -> String {
    if word.is_empty() {
        return String::new();
    }
    if ACRONYMS.contains(&word.to_uppercase().as_str()) {
        let suffix = if word.ends_with(['s', 'S']) {
            "es"
        } else {
            "s"
        };
        return format!("{word}{suffix}");
    }
    let lower = word.to_lowercase();
    let is_known_plural = DICTIONARY.iter().any(|entry| {
        !entry.unidirectional && (entry.plural == lower || entry.alternative == lower)
    });
    if is_known_plural {
        return word.to_owned();
    }
    if let Some(entry) = DICTIONARY.iter().find(|entry| entry.singular == lower) {
        return entry.plural.to_owned();
    }
    for rule in rules() {
        if lower.ends_with(rule.suffix) {
            return match rule.replacement {
                None => word.to_owned(),
                Some(replacement) => {
                    let stem = &word[..word.len() - rule.suffix.len()];
                    format!("{stem}{replacement}")
                }
            };
        }
    }
    if lower.ends_with('s') {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

#[cfg(test)]
mod tests;
