//! The runtime's layering: a module of `kbr-runtime` may only use modules of lower layers.
//!
//! The layers, bottom to top, are the table under "Runtime layers" in `docs/design-notes.md`
//! (read here, so the page and the check cannot disagree). This test reads every file of
//! `runtime/src`, drops comments (doc links included), string and character literals and
//! `#[cfg(test)]` items, and collects the module every `crate::…`, `kbr_runtime::…` and
//! root-escaping `super::…` path names; names re-exported by `lib.rs` (`crate::Error`) count as
//! the module they come from. Any path into the same or a higher layer fails, as does a module
//! missing from the table.
//!
//! Unit tests (`#[cfg(test)]`) are exempt: they may drive a low layer through a higher one (the
//! fake API server, say) without shaping the library's dependency graph.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

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

/// Replaces comments, string and character literals with spaces, keeping line breaks.
fn strip_comments_and_literals(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(&chars, i) {
            for &c in &chars[i..end] {
                blank(&mut out, c);
            }
            i = end;
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&c) = chars.get(i) {
                    blank(&mut out, c);
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' && is_char_literal(&chars, i) {
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                if chars[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The end of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`, if one does.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let prefix_start = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    if prefix_start {
        return None;
    }
    let mut j = i;
    if matches!(chars.get(j), Some('b' | 'c')) {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"'
            && chars[j + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// Whether the `'` at `i` opens a character literal (`'a'`, `'\n'`) rather than a lifetime.
fn is_char_literal(chars: &[char], i: usize) -> bool {
    match chars.get(i + 1) {
        Some('\\') => true,
        Some(_) => chars.get(i + 2) == Some(&'\''),
        None => false,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Identifiers, `::` and single punctuation characters, each with its line.
fn tokenize(code: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut tokens = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            tokens.push((Token::Ident(chars[start..i].iter().collect()), line));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            tokens.push((Token::PathSep, line));
            i += 2;
        } else {
            tokens.push((Token::Punct(c), line));
            i += 1;
        }
    }
    tokens
}

fn is_ident(token: Option<&(Token, usize)>, name: &str) -> bool {
    matches!(token, Some((Token::Ident(ident), _)) if ident == name)
}

fn is_punct(token: Option<&(Token, usize)>, c: char) -> bool {
    matches!(token, Some((Token::Punct(p), _)) if *p == c)
}

/// The index just past the group opened at `open` (`{`, `[` or `(`).
fn skip_group(tokens: &[(Token, usize)], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, (token, _)) in tokens.iter().enumerate().skip(open) {
        match token {
            Token::Punct('{' | '[' | '(') => depth += 1,
            Token::Punct('}' | ']' | ')') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    tokens.len()
}

/// Whether the attribute `#[...]` spanning `tokens[start..end]` is `cfg(...)` with `test`.
fn is_test_cfg(attribute: &[(Token, usize)]) -> bool {
    let idents: Vec<&str> = attribute
        .iter()
        .filter_map(|(t, _)| match t {
            Token::Ident(i) => Some(i.as_str()),
            _ => None,
        })
        .collect();
    idents.first() == Some(&"cfg") && idents.contains(&"test") && !idents.contains(&"not")
}

/// The top-level names a path names after `crate::` (or an escaping `super::`) at `i`: one
/// identifier, or the first identifier of every entry of a `{…}` group.
fn path_heads(tokens: &[(Token, usize)], i: usize) -> Vec<String> {
    match tokens.get(i) {
        Some((Token::Ident(name), _)) => vec![name.clone()],
        Some((Token::Punct('{'), _)) => {
            let end = skip_group(tokens, i);
            let mut heads = Vec::new();
            let (mut depth, mut entry_start) = (0, true);
            for (token, _) in &tokens[i + 1..end.saturating_sub(1)] {
                match token {
                    Token::Punct('{') => depth += 1,
                    Token::Punct('}') => depth -= 1,
                    Token::Punct(',') if depth == 0 => entry_start = true,
                    Token::Ident(name) if depth == 0 && entry_start => {
                        heads.push(name.clone());
                        entry_start = false;
                    }
                    _ if depth == 0 => entry_start = false,
                    _ => {}
                }
            }
            heads
        }
        _ => Vec::new(),
    }
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

/// The index past the item starting at `i` (its attributes, then up to `;` or a `{…}` body).
fn skip_item(tokens: &[(Token, usize)], mut i: usize) -> usize {
    while i < tokens.len() {
        match &tokens[i].0 {
            Token::Punct(';') => return i + 1,
            Token::Punct('{') => return skip_group(tokens, i),
            Token::Punct('[' | '(') => i = skip_group(tokens, i),
            _ => i += 1,
        }
    }
    i
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

/// Every file under `src` (relative path, contents), sorted.
fn sources(src: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let relative = path
                    .strip_prefix(src)
                    .map(Path::to_path_buf)
                    .unwrap_or(path);
                files.push((relative, text));
            }
        }
    }
    files.sort();
    files
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
    let mut problems = Vec::new();
    let lib = files
        .iter()
        .find(|(path, _)| path == Path::new("lib.rs"))
        .map(|(_, text)| text.as_str())
        .unwrap_or_default();
    let (modules, exports) = crate_root(lib);
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
