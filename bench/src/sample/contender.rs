//! Who does the controller's work in one row of the sample report.

use super::SampleImpl;

/// One row of the report: who does the controller's work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contender {
    /// One of the benchmark's own controllers (`sample-controller --impl ..`).
    Builtin(SampleImpl),
    /// The program of `--controller-cmd`.
    External,
    /// No controller: the benchmark's writers create each Deployment and write each status.
    Ceiling,
}

impl Contender {
    /// The name in namespaces.
    pub(super) fn slug(self) -> &'static str {
        match self {
            Self::Builtin(which) => which.flag(),
            Self::External => "external",
            Self::Ceiling => "ceiling",
        }
    }
}

pub(super) fn parse_contender(value: &str) -> Result<Contender, String> {
    if value == "ceiling" {
        return Ok(Contender::Ceiling);
    }
    SampleImpl::ALL
        .into_iter()
        .find(|which| which.flag() == value)
        .map(Contender::Builtin)
        .ok_or_else(|| {
            format!(
                "unknown contender {value:?}: use kbr, kbr-metadata, kbr-transform, kube or ceiling"
            )
        })
}
