//! English plurals for resource names: gobuffalo/flect's `Pluralize`, as Kubebuilder uses it.
//!
//! Kubebuilder derives a kind's plural (its REST resource name, e.g. `brokers`) as
//! `flect.Pluralize(strings.ToLower(kind))` (`pkg/model/resource/utils.go`, `RegularPlural`);
//! [`resource_plural`] does the same, so a project scaffolded by either tool, and a type
//! written by hand, get the same CRD names. [`pluralize`] is flect's algorithm on any word:
//! 1. only the last word of an identifier is inflected (`SmartPerson` -> `SmartPeople`,
//!    `node_child` -> `node_children`; words split at `_`, ` `, `:`, `-`, `/` and case changes);
//! 2. a known acronym (`DNS`, `ID`, `URL`, …) gets `s`, or `es` after an `s`;
//! 3. a word that is already a known plural stays as it is;
//! 4. a dictionary word takes its irregular plural (`person` -> `people`, `ox` -> `oxen`,
//!    uncountables like `equipment` stay), capitalized when the word is;
//! 5. the first matching suffix rule applies: dictionary words as suffixes of compounds, then
//!    the suffix list (`-f`/`-fe` -> `-ves` where flect does, consonant + `y` -> `-ies`,
//!    `-s`/`-x`/`-z`/`-ch`/`-sh` -> `-es`, `-is` -> `-es` for some endings, `-um` -> `-a`, …);
//!    a word ending in a known plural suffix is left alone;
//! 6. a word ending in `s` stays; anything else gets `s`.
//!
//! The tests run flect's own table (`flect_test.go`'s `singlePluralAssertions`) row by row.
//!
//! ```
//! use kbr_core::plural::{pluralize, resource_plural};
//! assert_eq!(resource_plural("Broker"), "brokers");
//! assert_eq!(resource_plural("Ox"), "oxen");
//! assert_eq!(pluralize("SmartPerson"), "SmartPeople");
//! ```

mod rules;
#[cfg(test)]
mod tests;

use rules::{ACRONYMS, DICTIONARY, SUFFIXES};

/// A kind's default resource plural, as Kubebuilder computes it:
/// `flect.Pluralize(strings.ToLower(kind))`, e.g. `Broker` -> `brokers`, `Policy` ->
/// `policies`, `Endpoints` -> `endpoints`.
pub fn resource_plural(kind: &str) -> String {
    pluralize(&kind.to_lowercase())
}

/// The plural of `word` by flect's rules (see the module docs): `broker` -> `brokers`,
/// `policy` -> `policies`, `person` -> `people`, `Status` -> `Statuses`; `""` stays `""`.
pub fn pluralize(word: &str) -> String {
    let parts = parts(word);
    let Some(last) = parts.last() else {
        return String::new();
    };
    if is_acronym(last) {
        let suffix = if last.ends_with(['s', 'S']) {
            "es"
        } else {
            "s"
        };
        return format!("{word}{suffix}");
    }
    let lower = last.to_lowercase();
    let is_known_plural = DICTIONARY.iter().any(|entry| {
        !entry.unidirectional && (entry.plural == lower || entry.alternative == lower)
    });
    if is_known_plural {
        return word.to_owned();
    }
    if let Some(entry) = DICTIONARY.iter().find(|entry| entry.singular == lower) {
        let plural = if *last == capitalize(last) {
            capitalize(entry.plural)
        } else {
            entry.plural.to_owned()
        };
        return replace_suffix(word, last, &plural);
    }
    for rule in rules() {
        if lower.ends_with(rule.suffix) {
            let Some(replacement) = rule.replacement else {
                return word.to_owned();
            };
            // flect cuts the suffix's length in bytes off the word as written.
            let stem = last
                .len()
                .checked_sub(rule.suffix.len())
                .and_then(|end| last.get(..end))
                .unwrap_or(&lower[..lower.len() - rule.suffix.len()]);
            return replace_suffix(word, last, &format!("{stem}{replacement}"));
        }
    }
    if lower.ends_with('s') {
        word.to_owned()
    } else {
        format!("{word}s")
    }
}

/// flect's `Ident.ReplaceSuffix`: `word` without the suffix `last` (if it has it), then `new`.
fn replace_suffix(word: &str, last: &str, new: &str) -> String {
    format!("{}{new}", word.strip_suffix(last).unwrap_or(word))
}

/// flect's `Capitalize`: the first character upper-cased, the rest as it is.
fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// Whether `word`, upper-cased, is one of flect's acronyms.
fn is_acronym(word: &str) -> bool {
    ACRONYMS.contains(&word.to_uppercase().as_str())
}

/// flect's word separators (`spaces`), besides white space.
fn is_separator(c: char) -> bool {
    matches!(c, '_' | ' ' | ':' | '-' | '/') || c.is_whitespace()
}

/// Go's `unicode.IsPunct` on ASCII (categories P*); other characters count as not punctuation.
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() && !matches!(c, '$' | '+' | '<' | '=' | '>' | '^' | '`' | '|' | '~')
}

/// flect's `toParts`: the words of an identifier, split at separators, at a lower-to-upper
/// case change and after an acronym; acronyms upper-cased. `My_URLProxy` -> `My`, `URL`,
/// `Proxy`.
fn parts(text: &str) -> Vec<String> {
    let text = text.trim();
    if text.is_empty() {
        return Vec::new();
    }
    if is_acronym(text) {
        return vec![text.to_uppercase()];
    }
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut previous_upper = false;
    for c in text.chars() {
        let upper = c.is_uppercase();
        let starts_word = is_separator(c) || (upper && (!previous_upper || is_acronym(&current)));
        previous_upper = upper;
        if starts_word {
            push_part(&mut parts, std::mem::take(&mut current));
            current.push(c);
        } else if c.is_alphanumeric() || is_punctuation(c) || c == '`' {
            current.push(c);
        } else {
            push_part(&mut parts, std::mem::take(&mut current));
        }
    }
    push_part(&mut parts, current);
    parts
}

/// flect's `xappend`: `part` trimmed of white space, then of each separator in turn,
/// upper-cased if it is an acronym, and kept if anything is left.
fn push_part(parts: &mut Vec<String>, part: String) {
    let mut part = part.trim();
    for separator in ['_', ' ', ':', '-', '/'] {
        part = part.trim_matches(separator);
    }
    if part.is_empty() {
        return;
    }
    parts.push(if is_acronym(part) {
        part.to_uppercase()
    } else {
        part.to_owned()
    });
}

/// A suffix rule: a word ending in `suffix` becomes `<stem>replacement`, or stays as it is when
/// `replacement` is `None` (it already ends in a plural suffix).
struct Rule {
    suffix: &'static str,
    replacement: Option<&'static str>,
}

/// The suffix rules in flect's priority order: non-exact dictionary words (last entry first),
/// then the suffix list; each pair's plural-already check precedes its singular rule.
fn rules() -> impl Iterator<Item = Rule> {
    let from_dictionary = DICTIONARY.iter().rev().filter(|word| !word.exact);
    let dictionary_rules = from_dictionary.map(|word| (word.singular, word.plural));
    dictionary_rules
        .chain(SUFFIXES.iter().copied())
        .flat_map(|(singular, plural)| {
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
        })
}
