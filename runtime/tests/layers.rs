//! The runtime's layering: a module of `kbr-runtime` may only use modules of lower layers.
//!
//! The layers, bottom to top, are the table under "Runtime layers" in `docs/design-notes.md`
//! (read here, so the page and the check cannot disagree). This test reads every file of
//! `runtime/src`, drops comments (doc links included), string and character literals and
//! `#[cfg(test)]` items (and the files of `#[cfg(test)] mod tests;`), and collects the module every `crate::…`, `kbr_runtime::…` and
//! root-escaping `super::…` path names; names re-exported by `lib.rs` (`crate::Error`) count as
//! the module they come from. Any path into the same or a higher layer fails, as does a module
//! missing from the table.
//!
//! Unit tests (`#[cfg(test)]`) are exempt: they may drive a low layer through a higher one (the
//! manager, say) without shaping the library's dependency graph; so are test-only modules of
//! the crate root (`#[cfg(test)] mod stub;`, the unit tests' stand-in for an API server).

mod source_scan;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use source_scan::{
    Token, is_ident, is_punct, is_test_cfg, path_heads, skip_group, skip_item, sources,
    strip_comments_and_literals, test_modules, tokenize, without_unit_tests,
};

/// One `use` edge from a file into a module of the same or a higher layer.
#[derive(Debug, PartialEq, Eq)]
struct Violation {
    file: String,
    line: usize,
    from: String,
    to: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: `{}` uses `{}`, which is not in a lower layer",
            self.file, self.line, self.from, self.to
        )
    }
}

/// The layer table of `docs/design-notes.md`: module -> layer (0 = bottom).
fn layers_from_design_notes(notes: &str) -> Result<BTreeMap<String, usize>, String> {
    let start = notes
        .find("<!-- runtime layers")
        .ok_or("docs/design-notes.md has no `<!-- runtime layers ... -->` table")?;
    let mut layers = BTreeMap::new();
    let rows = notes[start..]
        .lines()
        .skip(1)
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'));
    for row in rows {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(Ok(layer)) = cells.get(1).map(|c| c.parse::<usize>()) else {
            continue; // the header and the separator row
        };
        let modules = cells.get(2).copied().unwrap_or_default();
        for module in modules.split('`').skip(1).step_by(2) {
            if layers.insert(module.to_string(), layer).is_some() {
                return Err(format!("module `{module}` is in two layers"));
            }
        }
    }
    if layers.is_empty() {
        return Err("the runtime layers table of docs/design-notes.md is empty".into());
    }
    Ok(layers)
}

/// Every `(line, top-level name)` a file's non-test code reaches through the crate root.
/// `depth` is the file's module depth below the root (`metrics.rs` 1, `client/index.rs` 2).
fn root_paths(source: &str, depth: usize) -> Vec<(usize, String)> {
    let tokens = tokenize(&strip_comments_and_literals(source));
    let mut found = Vec::new();
    // Inline `mod name { … }` blocks deepen `super::`; each entry is the brace depth inside it.
    let (mut braces, mut inline_mods) = (0usize, Vec::<usize>::new());
    let mut i = 0;
    while i < tokens.len() {
        let previous = i.checked_sub(1).map(|p| &tokens[p]);
        let after_path_sep = matches!(previous, Some((Token::PathSep, _)));
        match &tokens[i].0 {
            Token::Punct('#') if is_punct(tokens.get(i + 1), '[') => {
                let end = skip_group(&tokens, i + 1);
                if is_test_cfg(&tokens[i + 2..end.saturating_sub(1)]) {
                    i = skip_item(&tokens, end);
                } else {
                    i = end;
                }
                continue;
            }
            Token::Punct('{') => braces += 1,
            Token::Punct('}') => {
                if inline_mods.last() == Some(&braces) {
                    inline_mods.pop();
                }
                braces = braces.saturating_sub(1);
            }
            Token::Ident(kw)
                if kw == "mod"
                    && matches!(tokens.get(i + 1), Some((Token::Ident(_), _)))
                    && is_punct(tokens.get(i + 2), '{') =>
            {
                inline_mods.push(braces + 1);
            }
            Token::Ident(root)
                if !after_path_sep
                    && matches!(root.as_str(), "crate" | "$crate" | "kbr_runtime")
                    && matches!(tokens.get(i + 1), Some((Token::PathSep, _))) =>
            {
                let line = tokens[i].1;
                found.extend(path_heads(&tokens, i + 2).into_iter().map(|h| (line, h)));
            }
            Token::Ident(kw) if kw == "super" && !after_path_sep => {
                let mut supers = 0;
                let mut j = i;
                while is_ident(tokens.get(j), "super")
                    && matches!(tokens.get(j + 1), Some((Token::PathSep, _)))
                {
                    supers += 1;
                    j += 2;
                }
                if supers >= depth + inline_mods.len() {
                    let line = tokens[i].1;
                    found.extend(path_heads(&tokens, j).into_iter().map(|h| (line, h)));
                }
                i = j.max(i + 1);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// What `lib.rs` declares: its modules, and every re-exported name -> the module it comes from
/// (names re-exported from other crates map to `None`).
fn crate_root(lib: &str) -> (BTreeSet<String>, BTreeMap<String, Option<String>>) {
    let tokens = tokenize(&strip_comments_and_literals(lib));
    let (mut modules, mut exports) = (BTreeSet::new(), BTreeMap::new());
    let mut i = 0;
    while i < tokens.len() {
        if is_ident(tokens.get(i), "mod")
            && let Some((Token::Ident(name), _)) = tokens.get(i + 1)
        {
            modules.insert(name.clone());
        }
        if is_ident(tokens.get(i), "use")
            && is_ident(i.checked_sub(1).and_then(|p| tokens.get(p)), "pub")
        {
            let end = tokens[i..]
                .iter()
                .position(|(t, _)| *t == Token::Punct(';'))
                .map_or(tokens.len(), |p| i + p);
            let statement = &tokens[i + 1..end];
            let Some((Token::Ident(source), _)) = statement.first() else {
                i = end;
                continue;
            };
            // The exported names: the identifiers before `,`, `}` or the end (after `as`, if
            // any); `pub use kube;` exports `kube` itself.
            for (k, (token, _)) in statement.iter().enumerate() {
                let ends_name = matches!(
                    statement.get(k + 1).map(|t| &t.0),
                    None | Some(Token::Punct(',' | '}'))
                );
                if let Token::Ident(name) = token
                    && ends_name
                {
                    exports.insert(name.clone(), Some(source.clone()));
                }
            }
            i = end;
        }
        i += 1;
    }
    for target in exports.values_mut() {
        if target.as_ref().is_some_and(|m| !modules.contains(m)) {
            *target = None;
        }
    }
    (modules, exports)
}

/// The top-level module of `file` and its module depth (`client/index.rs` -> `client`, 2).
fn module_of(file: &Path) -> (String, usize) {
    let parts: Vec<String> = file
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let top = parts[0].trim_end_matches(".rs").to_string();
    let last = parts.last().map(String::as_str).unwrap_or_default();
    let depth = if last == "mod.rs" {
        parts.len() - 1
    } else {
        parts.len()
    };
    (top, depth)
}

/// Checks `files` (paths relative to `src`, `lib.rs` among them) against `layers`.
fn check(files: &[(PathBuf, String)], layers: &BTreeMap<String, usize>) -> Result<(), Vec<String>> {
    let files = &without_unit_tests(files.to_vec());
    let mut problems = Vec::new();
    let lib = files
        .iter()
        .find(|(path, _)| path == Path::new("lib.rs"))
        .map(|(_, text)| text.as_str())
        .unwrap_or_default();
    let (mut modules, exports) = crate_root(lib);
    // Test-only modules of the crate root (`#[cfg(test)] mod stub;`) are exempt, as unit tests.
    for test in test_modules(lib) {
        modules.remove(&test);
    }
    for module in &modules {
        if !layers.contains_key(module) {
            problems.push(format!(
                "module `{module}` is in no layer: add it to the table in docs/design-notes.md"
            ));
        }
    }
    for module in layers.keys() {
        if !modules.contains(module) {
            problems.push(format!(
                "the layer table names `{module}`, which lib.rs does not declare"
            ));
        }
    }
    for (path, text) in files {
        if path == Path::new("lib.rs") {
            continue;
        }
        let (from, depth) = module_of(path);
        let Some(&from_layer) = layers.get(&from) else {
            continue; // reported above
        };
        for (line, head) in root_paths(text, depth) {
            let to = if modules.contains(&head) {
                head
            } else {
                match exports.get(&head) {
                    Some(Some(module)) => module.clone(),
                    Some(None) => continue, // re-exported from another crate (kube, serde, ...)
                    None => {
                        problems.push(format!("{}:{line}: `crate::{head}` is neither a module nor a re-export of lib.rs", path.display()));
                        continue;
                    }
                }
            };
            let to_layer = layers.get(&to).copied().unwrap_or(usize::MAX);
            if to != from && to_layer >= from_layer {
                let violation = Violation {
                    file: path.display().to_string(),
                    line,
                    from: from.clone(),
                    to,
                };
                problems.push(violation.to_string());
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[test]
fn every_module_uses_only_lower_layers() {
    let runtime = Path::new(env!("CARGO_MANIFEST_DIR"));
    let notes_path = runtime.join("../docs/design-notes.md");
    let notes = std::fs::read_to_string(&notes_path)
        .unwrap_or_else(|e| panic!("{}: {e}", notes_path.display()));
    let layers = layers_from_design_notes(&notes).unwrap_or_else(|e| panic!("{e}"));
    if let Err(problems) = check(&sources(&runtime.join("src")), &layers) {
        panic!(
            "kbr-runtime's layering is broken (see \"Runtime layers\" in docs/design-notes.md):\n{}",
            problems.join("\n")
        );
    }
}

/// A three-layer crate for the check's own tests.
fn toy(files: &[(&str, &str)]) -> Result<(), Vec<String>> {
    let notes = "<!-- runtime layers -->\n| layer | modules |\n|---|---|\n| 0 | `error` |\n| 1 | `client`, `events` |\n| 2 | `manager` |\n";
    let layers = layers_from_design_notes(notes).unwrap_or_else(|e| panic!("{e}"));
    let lib = "pub mod client;\npub mod error;\npub mod events;\npub mod manager;\npub use client::Client;\npub use error::Error;\npub use kube;\n";
    let mut all = vec![(PathBuf::from("lib.rs"), lib.to_string())];
    all.extend(
        files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), (*t).to_string())),
    );
    check(&all, &layers)
}

#[test]
fn downward_paths_pass() {
    let client =
        "use crate::Error;\nuse crate::{error::Error as E, kube};\nuse self::cache::Cache;\n";
    let manager = "use crate::client::{Client, ListOptions};\nuse crate::events;\n";
    assert_eq!(
        toy(&[
            ("client/mod.rs", client),
            ("client/cache.rs", "use super::Client;"),
            ("manager/mod.rs", manager)
        ]),
        Ok(())
    );
}

#[test]
fn upward_and_sideways_paths_fail() {
    let up = toy(&[("client/mod.rs", "use crate::{error, manager::Manager};")]);
    assert_eq!(
        up,
        Err(vec![
            "client/mod.rs:1: `client` uses `manager`, which is not in a lower layer".to_string()
        ])
    );
    let through_reexport = toy(&[("error.rs", "\n\nfn f(_: crate::Client) {}")]);
    assert_eq!(
        through_reexport,
        Err(vec![
            "error.rs:3: `error` uses `client`, which is not in a lower layer".to_string()
        ])
    );
    let sideways = toy(&[("events.rs", "use kbr_runtime::client::Client;")]);
    assert!(sideways.is_err_and(|p| p[0].contains("`events` uses `client`")));
    let escaping_super = toy(&[("client/cache.rs", "use super::super::manager::Manager;")]);
    assert!(escaping_super.is_err_and(|p| p[0].contains("`client` uses `manager`")));
}

#[test]
fn comments_literals_and_unit_tests_are_ignored() {
    let error = r##"
//! See [`crate::manager::Manager`].
/// Returned by [`Client::get`](crate::client::Client::get).
pub struct Error; /* crate::manager */
const A: &str = "crate::manager::Manager";
const B: &str = r#"crate::manager"#;
const C: char = '"';
fn f<'a>(x: &'a str) -> &'a str { x }
#[cfg(test)]
mod tests {
    use crate::manager::Manager;
}
#[cfg(all(test, feature = "testing"))]
mod more { fn g() { let _ = crate::client::Client; } }
"##;
    assert_eq!(toy(&[("error.rs", error)]), Ok(()));
}

#[test]
fn files_of_unit_test_modules_are_ignored() {
    let client = "#[cfg(test)]\nmod tests;\nmod cached;\n";
    let tests = "use crate::manager::Manager;\n";
    let below = "use crate::manager::Manager;\n";
    assert_eq!(
        toy(&[
            ("client/mod.rs", client),
            ("client/tests.rs", tests),
            ("client/tests/helpers.rs", below),
        ]),
        Ok(())
    );
    let cached = toy(&[("client/mod.rs", client), ("client/cached.rs", below)]);
    assert!(cached.is_err_and(|p| p[0].contains("`client` uses `manager`")));
}

#[test]
fn modules_outside_the_table_fail() {
    let notes = "<!-- runtime layers -->\n| layer | modules |\n|---|---|\n| 0 | `error` |\n";
    let layers = layers_from_design_notes(notes).unwrap_or_else(|e| panic!("{e}"));
    let files = vec![(
        PathBuf::from("lib.rs"),
        "mod error;\nmod extra;\n".to_string(),
    )];
    let problems = check(&files, &layers).unwrap_err();
    assert!(
        problems[0].contains("`extra` is in no layer"),
        "{problems:?}"
    );
}
