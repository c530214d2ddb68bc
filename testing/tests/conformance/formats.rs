//! `format`s: number ranges and string formats of a custom resource's schema, with the API
//! server's texts.

use super::raw::{JSON, cause, send};
use super::{Ctx, TestResult};

/// Creates a Reading named `name` with `spec` (JSON text).
async fn create(
    ctx: &Ctx,
    name: &str,
    spec: &str,
) -> Result<super::raw::Answer, Box<dyn std::error::Error + Send + Sync>> {
    let url = format!(
        "/apis/conformance.kbr.dev/v1/namespaces/{}/readings",
        ctx.ns
    );
    let body = format!(
        r#"{{"apiVersion":"conformance.kbr.dev/v1","kind":"Reading","metadata":{{"name":"{name}"}},"spec":{spec}}}"#
    );
    send(&ctx.client, "POST", &url, JSON, &body).await
}

/// Pins kube-openapi's `pkg/validation/validate` (`numberValidator` with
/// `IsValueValidAgainstRange` in `values.go`: `Checked value must be of type integer with
/// format int32 in …`, reported at `<nil>` by apiextensions' `kubeOpenAPIResultToFieldErrors`;
/// `typeValidator` in `type.go`: a float for an `int32` field is `must be of type int32:
/// "float64"`) and `apiextensions-apiserver/pkg/apiserver/validation/formats.go` (int32,
/// int64, float and double kept for numbers). A whole float is stored as an integer, as Go
/// re-encodes it.
pub async fn numbers_must_fit_their_format(ctx: &Ctx) -> TestResult {
    let refused = create(ctx, "big", r#"{"count":3000000000}"#).await?;
    assert_eq!(refused.code, 422);
    assert_eq!(
        refused.causes(),
        [cause(
            "FieldValueInvalid",
            "<nil>",
            r#"Invalid value: "": Checked value must be of type integer with format int32 in spec.count"#
        )]
    );
    assert_eq!(
        refused.message(),
        r#"Reading.conformance.kbr.dev "big" is invalid: <nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.count"#
    );
    let refused = create(ctx, "fraction", r#"{"count":1.5}"#).await?;
    assert_eq!(
        refused.causes(),
        [
            cause(
                "FieldValueTypeInvalid",
                "spec.count",
                r#"Invalid value: "float64": spec.count in body must be of type int32: "float64""#
            ),
            cause(
                "FieldValueInvalid",
                "<nil>",
                r#"Invalid value: "": Checked value must be of type integer with format int32 in spec.count"#
            ),
        ]
    );
    let refused = create(ctx, "huge", r#"{"ratio":1e39}"#).await?;
    assert_eq!(
        refused.causes(),
        [cause(
            "FieldValueInvalid",
            "<nil>",
            r#"Invalid value: "": Checked value must be of type number with format float in spec.ratio"#
        )]
    );
    let stored = create(
        ctx,
        "fits",
        r#"{"count":2.0,"total":3000000000,"ratio":0.5}"#,
    )
    .await?;
    assert_eq!(stored.code, 201, "{stored:?}");
    assert_eq!(
        stored.body["spec"],
        serde_json::json!({"count": 2, "total": 3_000_000_000_i64, "ratio": 0.5})
    );
    assert_eq!(
        stored.body["spec"]["count"].as_i64(),
        Some(2),
        "2.0 is stored as 2"
    );
    Ok(())
}

/// Pins `apiextensions-apiserver/pkg/apiserver/validation/formats.go`
/// (`supportedVersionedFormats`: date-time, uuid, ipv4, cidr, duration and, since 1.34,
/// k8s-short-name are checked) and kube-openapi's `strfmt` checks (`default.go`, `time.go`,
/// `duration.go`, `kubernetes-extensions.go`) with `formatValidator`'s `must be of type
/// <format>: "<value>"`.
pub async fn string_formats_are_checked(ctx: &Ctx) -> TestResult {
    let good = r#"{"at":"2024-02-29T10:00:00Z","id":"123e4567-e89b-12d3-a456-426614174000",
        "address":"10.0.0.1","network":"10.0.0.0/8","period":"1h30m","shortName":"my-name"}"#;
    let stored = create(ctx, "good", good).await?;
    assert_eq!(stored.code, 201, "{stored:?}");
    for (field, bad) in [
        ("at", "2024-02-30T10:00:00Z"),
        ("id", "not-a-uuid"),
        ("address", "10.0.0.256"),
        ("network", "10.0.0.0/33"),
        ("period", "soon"),
        ("shortName", "My_Name"),
    ] {
        let format = match field {
            "at" => "date-time",
            "id" => "uuid",
            "address" => "ipv4",
            "network" => "cidr",
            "period" => "duration",
            _ => "k8s-short-name",
        };
        let refused = create(ctx, "bad", &format!(r#"{{"{field}":"{bad}"}}"#)).await?;
        assert_eq!(refused.code, 422, "{field}");
        assert_eq!(
            refused.causes(),
            [cause(
                "FieldValueTypeInvalid",
                &format!("spec.{field}"),
                &format!(
                    r#"Invalid value: "{bad}": spec.{field} in body must be of type {format}: "{bad}""#
                )
            )]
        );
    }
    Ok(())
}
