//! The conformance suite (`tests/conformance/`) against a real kube-apiserver and etcd from
//! envtest, when `KUBEBUILDER_ASSETS` is set; without it the test prints why it skipped and
//! passes.
//!
//! One control plane serves every case (starting one takes seconds); each case runs on its
//! own task in its own namespace, one after the other, and every failure is reported before
//! the test fails.

mod conformance;

use std::time::Duration;

use conformance::{Ctx, Server, TestResult};
use kbr_testing::{TestEnv, envtest};

/// The variable that picks cases: only those whose `module::case` path contains its value
/// run (e.g. `KBR_CONFORMANCE_FILTER=tables::`); unset or empty, every case runs.
const FILTER: &str = "KBR_CONFORMANCE_FILTER";

/// Upper bound for one case.
const CASE_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs one case on its own task (so a failed assertion is reported, not fatal to the rest).
async fn run<F, Fut>(client: kube::Client, name: &'static str, case: F) -> Result<(), String>
where
    F: FnOnce(Ctx) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = TestResult> + Send,
{
    let task = tokio::spawn(async move {
        let ctx = Ctx::new(client, name, Server::Envtest)
            .await
            .map_err(|e| format!("creating the case's namespace: {e}"))?;
        tokio::time::timeout(CASE_TIMEOUT, case(ctx))
            .await
            .map_err(|_| format!("did not finish within {CASE_TIMEOUT:?}"))?
            .map_err(|e| e.to_string())
    });
    match task.await {
        Ok(outcome) => outcome,
        Err(join) => match join.try_into_panic() {
            Ok(panic) => Err(panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "panicked".to_owned())),
            Err(e) => Err(format!("task failed: {e}")),
        },
    }
}

macro_rules! envtest_cases {
    ($($module:ident :: $case:ident),* $(,)?) => {
        /// Every case as (name, outcome), run in order against `client`.
        async fn run_all(client: kube::Client) -> Vec<(&'static str, Result<(), String>)> {
            let filter = std::env::var(FILTER).unwrap_or_default();
            let mut outcomes = Vec::new();
            $(
                let name = stringify!($case);
                let path = concat!(stringify!($module), "::", stringify!($case));
                if path.contains(filter.as_str()) {
                    let outcome = run(client.clone(), name, |ctx: Ctx| async move {
                        conformance::$module::$case(&ctx).await
                    })
                    .await;
                    outcomes.push((name, outcome));
                }
            )*
            outcomes
        }
    };
}

conformance::for_each_case!(envtest_cases);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_on_envtest() -> TestResult {
    if !envtest::available() {
        eprintln!("skipping envtest conformance: KUBEBUILDER_ASSETS is not set");
        return Ok(());
    }
    let env = TestEnv::start_envtest(conformance::scheme()).await?;
    let mut failures = Vec::new();
    let outcomes = run_all(env.kube_client()).await;
    let cases = outcomes.len();
    for (name, outcome) in outcomes {
        match outcome {
            Ok(()) => eprintln!("envtest conformance: {name} ... ok"),
            Err(e) => {
                eprintln!("envtest conformance: {name} ... FAILED: {e}");
                failures.push(format!("{name}: {e}"));
            }
        }
    }
    eprintln!(
        "envtest conformance: {} of {cases} cases passed on kube-apiserver",
        cases - failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} conformance case(s) failed on kube-apiserver:\n{}",
        failures.len(),
        failures.join("\n")
    );
    Ok(())
}
