//! `?fieldValidation=Ignore|Warn|Strict`: what a write does about the fields its body has twice
//! or the object's type does not know.
//!
//! Mirrors `apiserver/pkg/endpoints/handlers` (`create.go`, `update.go`, `patch.go`, `rest.go`):
//! - the value is validated first (`apimachinery/pkg/apis/meta/v1/validation`,
//!   `ValidateFieldValidation`): anything else is a 422 on `CreateOptions`/`UpdateOptions`/
//!   `PatchOptions`;
//! - unset means `Warn` (what kube-rs and controller-runtime send; kubectl sends `Strict`):
//!   every strict decoding error — `duplicate field "…"`, `unknown field "…"` — becomes a
//!   `Warning` header, and the write goes on without those fields;
//! - `Strict` refuses the write: a create or update with a 400 `<Kind> in version "<v>" cannot
//!   be handled as a <Kind>: strict decoding error: …` (`transformDecodeError`), a patch with a
//!   422 whose one cause at `patch` shows the patched object (`jsonPatcher`);
//! - `Ignore` drops the fields silently.
//!
//! The errors themselves come from decoding the body ([`crate::rules::decode`]).

use serde_json::{Value, json};

use crate::handlers::request::Query;
use crate::handlers::warnings::Warnings;
use crate::machinery::api_error::ApiError;

/// The `fieldValidation` directive of a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldValidation {
    /// Drop unknown and duplicate fields silently.
    Ignore,
    /// Drop them and warn (the default).
    Warn,
    /// Refuse the write.
    Strict,
}

/// The options kind a write's query parameters decode into, for its 422.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Options {
    /// `POST`.
    Create,
    /// `PUT`.
    Update,
    /// `PATCH`.
    Patch,
}

impl Options {
    fn kind(self) -> &'static str {
        match self {
            Self::Create => "CreateOptions",
            Self::Update => "UpdateOptions",
            Self::Patch => "PatchOptions",
        }
    }
}

/// A 422 about the write's options, as `errors.NewInvalid` on `<Options>.meta.k8s.io ""`.
fn invalid_options(options: Options, field: &str, message: String) -> ApiError {
    ApiError {
        code: 422,
        reason: "Invalid",
        message: format!(
            "{}.meta.k8s.io \"\" is invalid: {field}: {message}",
            options.kind()
        ),
        details: Some(json!({
            "group": "meta.k8s.io",
            "kind": options.kind(),
            "causes": [{"reason": "FieldValueNotSupported", "message": message, "field": field}],
        })),
    }
}

impl FieldValidation {
    /// The directive of a write's query; 422 for a value other than `Ignore`, `Warn`,
    /// `Strict` or none, and for a `dryRun` other than `All` (`ValidateDryRun`).
    pub(crate) fn of(query: &Query, options: Options) -> Result<Self, ApiError> {
        if let Some(dry_run) = query.get("dryRun")
            && dry_run != "All"
        {
            return Err(invalid_options(
                options,
                "dryRun",
                format!("Unsupported value: [{dry_run:?}]: supported values: \"All\""),
            ));
        }
        match query.get("fieldValidation") {
            None | Some("Warn") => Ok(Self::Warn),
            Some("Strict") => Ok(Self::Strict),
            Some("Ignore") => Ok(Self::Ignore),
            Some(other) => Err(invalid_options(
                options,
                "fieldValidation",
                format!(
                    "Unsupported value: {other:?}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
                ),
            )),
        }
    }

    /// Whether the decoder looks for unknown and duplicate fields at all (`Warn`, `Strict`).
    pub(crate) fn is_strict_decoding(self) -> bool {
        self != Self::Ignore
    }

    /// A create's or update's strict decoding `errors` (`duplicate field "…"`, `unknown field
    /// "…"`): warnings, or with `Strict` the 400 naming the body's kind and version
    /// (`body_kind`, `body_version`) and the resource's kind.
    pub(crate) fn decoded(
        self,
        errors: &[String],
        body_kind: &str,
        body_version: &str,
        kind: &str,
        warnings: &mut Warnings,
    ) -> Result<(), ApiError> {
        self.report(errors, warnings, |joined| {
            ApiError::bad_request(format!(
                "{body_kind} in version {body_version:?} cannot be handled as a {kind}: strict decoding error: {joined}"
            ))
        })
    }

    /// A patch's strict decoding `errors` on the `patched` object: warnings, or with `Strict`
    /// the 422 `jsonPatcher.applyPatchToCurrentObject` answers.
    pub(crate) fn patched(
        self,
        errors: &[String],
        patched: &Value,
        warnings: &mut Warnings,
    ) -> Result<(), ApiError> {
        self.report(errors, warnings, |joined| {
            invalid_patch(patched, &format!("strict decoding error: {joined}"))
        })
    }

    /// What this mode does with strict decoding `errors`: nothing (`Ignore`), each a warning
    /// (`Warn`), or (`Strict`) the error `strict` makes of them joined by `", "`, as the
    /// apiserver's strict decoder reports them. No errors: `Ok` in every mode.
    fn report(
        self,
        errors: &[String],
        warnings: &mut Warnings,
        strict: impl FnOnce(String) -> ApiError,
    ) -> Result<(), ApiError> {
        if errors.is_empty() {
            return Ok(());
        }
        match self {
            Self::Ignore => Ok(()),
            Self::Warn => {
                errors.iter().for_each(|e| warnings.add(e.clone()));
                Ok(())
            }
            Self::Strict => Err(strict(errors.join(", "))),
        }
    }
}

/// The patcher's 422 for a patched object that does not decode: `errors.NewInvalid` with an
/// empty kind and name, one cause at `patch` showing the object.
pub(crate) fn invalid_patch(patched: &Value, why: &str) -> ApiError {
    let message = format!("Invalid value: {:?}: {why}", patched.to_string());
    ApiError {
        code: 422,
        reason: "Invalid",
        message: format!(" \"\" is invalid: patch: {message}"),
        details: Some(json!({
            "causes": [{"reason": "FieldValueInvalid", "message": message, "field": "patch"}],
        })),
    }
}
