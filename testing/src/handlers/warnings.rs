//! The `Warning` headers of one response.
//!
//! Mirrors `apiserver/pkg/endpoints/filters/warning.go` (the request's `recorder`): a warning
//! text is sent once however often it is added; each becomes `Warning: 299 - "<text>"` with `"`
//! and `\` escaped (`apimachinery/pkg/util/net/http.go`, `NewWarningHeader`; texts with control
//! characters are dropped); past 4096 characters in all, every warning is cut to 256
//! characters and the ones that no longer fit are dropped. Warnings are sent with failures
//! too: the real recorder writes them as they come.

use http::HeaderValue;

/// The whole budget of warning text, in characters (`truncateAtTotalRunes`).
const TOTAL: usize = 4 * 1024;

/// One warning's length once truncating (`truncateItemRunes`).
const ITEM: usize = 256;

/// The warnings of one request, in the order they were added.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    texts: Vec<String>,
}

impl Warnings {
    /// Adds a warning; empty and repeated texts are ignored.
    pub(crate) fn add(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !text.is_empty() && !self.texts.contains(&text) {
            self.texts.push(text);
        }
    }

    /// The texts as the recorder sends them, truncation applied.
    fn sent(&self) -> Vec<String> {
        let cut = |text: &str| text.chars().take(ITEM).collect::<String>();
        let mut sent: Vec<String> = Vec::new();
        let mut written = 0;
        let mut truncating = false;
        for (index, text) in self.texts.iter().enumerate() {
            if truncating && written >= TOTAL {
                break;
            }
            let text = if truncating { cut(text) } else { text.clone() };
            let length = text.chars().count();
            if truncating || written + length <= TOTAL {
                written += length;
                sent.push(text);
                continue;
            }
            // Over budget: start truncating and replay everything so far, cut.
            truncating = true;
            sent = self.texts[..=index].iter().map(|t| cut(t)).collect();
            written = sent.iter().map(|t| t.chars().count()).sum();
        }
        sent
    }

    /// Appends the `Warning` headers to `response`.
    pub(crate) fn write_to<B>(&self, response: &mut http::Response<B>) {
        for text in self.sent() {
            if text.chars().any(char::is_control) {
                continue;
            }
            let quoted = text.replace('\\', "\\\\").replace('"', "\\\"");
            if let Ok(value) = HeaderValue::from_str(&format!("299 - \"{quoted}\"")) {
                response.headers_mut().append(http::header::WARNING, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Warnings;

    fn headers(warnings: &Warnings) -> Vec<String> {
        let mut response = http::Response::new(());
        warnings.write_to(&mut response);
        response
            .headers()
            .get_all(http::header::WARNING)
            .iter()
            .map(|v| v.to_str().unwrap_or_default().to_owned())
            .collect()
    }

    #[test]
    fn warnings_are_quoted_and_sent_once() {
        let mut warnings = Warnings::default();
        warnings.add(r#"unknown field "spec.x""#);
        warnings.add(r#"unknown field "spec.x""#);
        warnings.add("");
        assert_eq!(headers(&warnings), [r#"299 - "unknown field \"spec.x\"""#]);
    }

    #[test]
    fn past_the_budget_every_warning_is_cut() {
        let mut warnings = Warnings::default();
        for i in 0..20 {
            warnings.add(format!("{i:03}{}", "x".repeat(297)));
        }
        let sent = headers(&warnings);
        assert_eq!(sent.len(), 16, "4096 characters of 256-character warnings");
        assert!(sent.iter().all(|h| h.len() == 256 + "299 - \"\"".len()));
    }
}
