//! Reading Rust sources without a parser, for the architecture tests (`layers.rs`,
//! `file_cycles.rs`): comments and literals blanked, tokens with their lines, `#[cfg(test)]`
//! items skipped, paths split into their heads.
#![allow(dead_code)] // each test uses part of it

use std::path::{Path, PathBuf};

/// Replaces comments, string and character literals with spaces, keeping line breaks.
pub fn strip_comments_and_literals(source: &str) -> String {
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
pub fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
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
pub fn is_char_literal(chars: &[char], i: usize) -> bool {
    match chars.get(i + 1) {
        Some('\\') => true,
        Some(_) => chars.get(i + 2) == Some(&'\''),
        None => false,
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Token {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Identifiers, `::` and single punctuation characters, each with its line.
pub fn tokenize(code: &str) -> Vec<(Token, usize)> {
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

pub fn is_ident(token: Option<&(Token, usize)>, name: &str) -> bool {
    matches!(token, Some((Token::Ident(ident), _)) if ident == name)
}

pub fn is_punct(token: Option<&(Token, usize)>, c: char) -> bool {
    matches!(token, Some((Token::Punct(p), _)) if *p == c)
}

/// The index just past the group opened at `open` (`{`, `[` or `(`).
pub fn skip_group(tokens: &[(Token, usize)], open: usize) -> usize {
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
pub fn is_test_cfg(attribute: &[(Token, usize)]) -> bool {
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
pub fn path_heads(tokens: &[(Token, usize)], i: usize) -> Vec<String> {
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

/// The index past the item starting at `i` (its attributes, then up to `;` or a `{…}` body).
pub fn skip_item(tokens: &[(Token, usize)], mut i: usize) -> usize {
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

/// Every `.rs` file under `src` (path relative to `src`, contents), sorted.
pub fn sources(src: &Path) -> Vec<(PathBuf, String)> {
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

/// The module path of a file relative to `src` (`lib.rs` -> [], `a/mod.rs` and `a.rs` -> [a]).
pub fn module_path(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    if !matches!(last.as_str(), "mod.rs" | "lib.rs") {
        parts.push(last.trim_end_matches(".rs").to_owned());
    }
    parts
}

/// The child modules a file declares for unit tests only (`#[cfg(test)] mod tests;`).
pub fn test_modules(source: &str) -> Vec<String> {
    let tokens = tokenize(&strip_comments_and_literals(source));
    let mut found = Vec::new();
    for (i, (token, _)) in tokens.iter().enumerate() {
        if *token != Token::Punct('#') || !is_punct(tokens.get(i + 1), '[') {
            continue;
        }
        let end = skip_group(&tokens, i + 1);
        if !is_test_cfg(&tokens[i + 2..end.saturating_sub(1)]) {
            continue;
        }
        let mut j = end;
        while is_punct(tokens.get(j), '#') {
            j = skip_group(&tokens, j + 1); // further attributes
        }
        if is_ident(tokens.get(j), "mod")
            && let Some((Token::Ident(name), _)) = tokens.get(j + 1)
            && is_punct(tokens.get(j + 2), ';')
        {
            found.push(name.clone());
        }
    }
    found
}

/// `files` (paths relative to `src`, from [`sources`]) without those of unit-test modules —
/// children declared `#[cfg(test)] mod name;` ([`test_modules`]) and everything below them —,
/// which are test code as `#[cfg(test)]` items are.
pub fn without_unit_tests(files: Vec<(PathBuf, String)>) -> Vec<(PathBuf, String)> {
    let tests: Vec<Vec<String>> = files
        .iter()
        .flat_map(|(path, text)| {
            let module = module_path(path);
            test_modules(text).into_iter().map(move |child| {
                let mut test = module.clone();
                test.push(child);
                test
            })
        })
        .collect();
    files
        .into_iter()
        .filter(|(path, _)| {
            let module = module_path(path);
            !tests.iter().any(|test| module.starts_with(test))
        })
        .collect()
}
