//! Logging setup: the `ctrl.SetLogger(zap.New(..))` line of a Kubebuilder `main.go`, with
//! `tracing-subscriber`. A leaf of the bottom layer: nothing else in the runtime depends on it.
//!
//! A filter in `tracing`'s directive syntax chooses what is logged (`info`, or
//! `info,kbr_runtime=debug`; default `info`), and a [`LogFormat`] how: human-readable text, or
//! one JSON object per line (what log collectors want in a cluster). [`init`] reads both from
//! the environment (`RUST_LOG`, `LOG_FORMAT=json`); a manager binary takes them as
//! `--log-level` and `--log-format` flags ([`ManagerArgs`](crate::ManagerArgs)), which fall back
//! to the same variables.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// How log lines are written: the `--log-format` flag (`LOG_FORMAT`), like zap's `--zap-encoder`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (zap's `console` encoder; `console` is accepted too).
    #[default]
    #[value(alias = "console")]
    Text,
    /// One JSON object per line, span fields flattened in (zap's `json` encoder).
    Json,
}

/// Installs the global tracing subscriber from the environment: the filter from `RUST_LOG`
/// (default `info`, also when it does not parse), JSON when `LOG_FORMAT` is `json` (any case),
/// text otherwise. Idempotent: a second call (or one after another subscriber was installed,
/// e.g. by a test harness) does nothing.
///
/// ```
/// kbr_runtime::logging::init();
/// kbr_runtime::logging::init(); // no panic
/// tracing::info!(controller = "broker", "starting");
/// ```
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let json = std::env::var("LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    install(
        filter,
        if json {
            LogFormat::Json
        } else {
            LogFormat::Text
        },
    );
}

/// Installs the global tracing subscriber with `filter` (checked with [`parse_filter`]; one that
/// does not parse logs at `info`) and `format`. Idempotent like [`init`].
///
/// ```
/// use kbr_runtime::logging::{LogFormat, init_with};
/// init_with("info,kbr_runtime=debug", LogFormat::Json);
/// ```
pub fn init_with(filter: &str, format: LogFormat) {
    install(
        EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("info")),
        format,
    );
}

fn install(filter: EnvFilter, format: LogFormat) {
    // Colour only on a terminal: a log redirected to a file or a pipe gets no ANSI codes.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stdout().is_terminal());
    let _ = match format {
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init(),
        LogFormat::Text => builder.try_init(),
    };
}

/// Checks a filter in `tracing`'s directive syntax (`RUST_LOG`'s): a level (`debug`), targets
/// with levels (`info,kbr_runtime=debug,kube=warn`), or both.
///
/// # Errors
/// The parser's message, naming the directive that does not parse.
///
/// ```
/// use kbr_runtime::logging::parse_filter;
/// assert!(parse_filter("info,kbr_runtime=debug").is_ok());
/// assert!(parse_filter("kbr_runtime=loud").is_err());
/// ```
pub fn parse_filter(filter: &str) -> Result<String, String> {
    EnvFilter::try_new(filter)
        .map(|_| filter.to_string())
        .map_err(|e| format!("{e} (expected a level such as `info`, or directives such as `info,kbr_runtime=debug`)"))
}
