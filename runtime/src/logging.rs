//! Logging setup: the `ctrl.SetLogger(zap.New(..))` line of a Kubebuilder `main.go`, with
//! `tracing-subscriber`.
//!
//! `RUST_LOG` sets the filter (default `info`), `LOG_FORMAT=json` switches to one JSON object
//! per line (what log collectors want in a cluster); otherwise human-readable text.

use tracing_subscriber::EnvFilter;

/// Installs the global tracing subscriber. Idempotent: a second call (or one after another
/// subscriber was installed, e.g. by a test harness) does nothing.
///
/// ```
/// kbr_runtime::logging::init();
/// kbr_runtime::logging::init(); // no panic
/// tracing::info!(controller = "broker", "starting");
/// ```
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let json = std::env::var("LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init()
    } else {
        builder.try_init()
    };
}
