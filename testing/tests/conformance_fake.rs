//! The conformance suite (`tests/conformance/`) against kbr's in-process fake API server: one
//! test per case, each on a fresh server.

mod conformance;

use conformance::{Ctx, Server, TestResult};
use kbr_testing::TestEnv;

macro_rules! fake_tests {
    ($($module:ident :: $case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() -> TestResult {
                let env = TestEnv::start_fake(conformance::scheme())?;
                let ctx = Ctx::new(env.kube_client(), stringify!($case), Server::Fake).await?;
                let case = conformance::$module::$case(&ctx);
                tokio::time::timeout(std::time::Duration::from_secs(60), case)
                    .await
                    .map_err(|_| "the case did not finish within 60 s")?
            }
        )*
    };
}

conformance::for_each_case!(fake_tests);
