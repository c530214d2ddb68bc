//! The options of reads: `resourceVersion`, `resourceVersionMatch`, `sendInitialEvents` and
//! `continue`, refused with kube-apiserver's codes and texts (raw requests: `kube::Api` checks
//! some of them itself).

use super::raw::{Answer, send_with};
use super::{Ctx, TestResult, config_map};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::PostParams;

type Error = Box<dyn std::error::Error + Send + Sync>;

async fn get(ctx: &Ctx, query: &str) -> Result<Answer, Error> {
    let uri = format!("/api/v1/namespaces/{}/configmaps{query}", ctx.ns);
    send_with(
        &ctx.client,
        "GET",
        &uri,
        &[("accept", "application/json")],
        "",
    )
    .await
}

/// The `(reason, field, message)` causes of a 422 on `ListOptions`, checked to be one.
fn list_options_causes(answer: &Answer) -> Vec<(String, String, String)> {
    assert_eq!(answer.code, 422, "{:?}", answer.body);
    assert_eq!(answer.body["reason"], "Invalid");
    assert_eq!(answer.body["details"]["kind"], "ListOptions");
    assert_eq!(answer.body["details"]["group"], "meta.k8s.io");
    assert!(
        answer
            .message()
            .starts_with("ListOptions.meta.k8s.io \"\" is invalid: ")
    );
    answer.causes()
}

fn forbidden(field: &str, why: &str) -> (String, String, String) {
    super::raw::cause("FieldValueForbidden", field, &format!("Forbidden: {why}"))
}

/// Pins apimachinery's `ValidateListOptions`: `resourceVersionMatch` needs a `resourceVersion`
/// and one of its values, `Exact` does not go with `0`, and lists take no `sendInitialEvents`.
pub async fn list_options_are_validated(ctx: &Ctx) -> TestResult {
    let match_field = "resourceVersionMatch";
    let alone = get(ctx, "?resourceVersionMatch=NotOlderThan").await?;
    assert_eq!(
        list_options_causes(&alone),
        vec![forbidden(
            match_field,
            "resourceVersionMatch is forbidden unless resourceVersion is provided"
        )]
    );
    assert_eq!(
        alone.message(),
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    );
    let unknown = get(ctx, "?resourceVersionMatch=Foo&resourceVersion=1").await?;
    assert_eq!(
        list_options_causes(&unknown),
        vec![super::raw::cause(
            "FieldValueNotSupported",
            match_field,
            "Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\""
        )]
    );
    let exact_zero = get(ctx, "?resourceVersionMatch=Exact&resourceVersion=0").await?;
    assert_eq!(
        list_options_causes(&exact_zero),
        vec![forbidden(
            match_field,
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""
        )]
    );
    let streaming_list = get(ctx, "?sendInitialEvents=true").await?;
    assert_eq!(
        list_options_causes(&streaming_list),
        vec![forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list"
        )]
    );
    let fine = get(ctx, "?resourceVersionMatch=NotOlderThan&resourceVersion=0").await?;
    assert_eq!(fine.code, 200);
    Ok(())
}

/// Pins apimachinery's `validateWatchOptions`: `sendInitialEvents` needs
/// `resourceVersionMatch=NotOlderThan`, and a watch takes `resourceVersionMatch` only with
/// `sendInitialEvents` and only `NotOlderThan` (both causes reported).
pub async fn watch_options_follow_the_streaming_list_rules(ctx: &Ctx) -> TestResult {
    let field = "resourceVersionMatch";
    let bare = get(ctx, "?watch=1&sendInitialEvents=true").await?;
    assert_eq!(
        list_options_causes(&bare),
        vec![forbidden(
            field,
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
        )]
    );
    let exact = get(ctx, "?watch=1&resourceVersionMatch=Exact&resourceVersion=1").await?;
    assert_eq!(
        list_options_causes(&exact),
        vec![
            forbidden(
                field,
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
            ),
            super::raw::cause(
                "FieldValueNotSupported",
                field,
                "Unsupported value: \"Exact\": supported values: \"NotOlderThan\""
            ),
        ]
    );
    let streaming = get(
        ctx,
        "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1",
    )
    .await?;
    assert_eq!(streaming.code, 200);
    Ok(())
}

/// Pins the storage layer's version checks (etcd3 `store.go`, `cacher.go`): a version that is
/// not a decimal is a 400 for a list and a reason-less 500 for a get. (A version the store has
/// not reached, a 504 with `Retry-After`, is not in the suite: kube's client retries it for as
/// long as the real server answers it; `list_options.rs`'s unit tests pin the fake's answer.)
pub async fn resource_versions_must_be_numbers_the_store_has_reached(ctx: &Ctx) -> TestResult {
    let why = "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax";
    let list = get(ctx, "?resourceVersion=abc").await?;
    assert_eq!(
        (list.code, list.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );
    assert_eq!(list.message(), format!("invalid resource version: {why}"));
    ctx.api::<ConfigMap>()
        .create(&PostParams::default(), &config_map("c", &[], &[]))
        .await?;
    let one = get(ctx, "/c?resourceVersion=abc").await?;
    assert_eq!((one.code, one.message()), (500, why));
    assert_eq!(one.body.get("reason"), None);

    Ok(())
}

/// Pins apiserver's `storage/continue.go`: a token that is not base64url, or names another
/// version, is a 400 `invalid continue token`; the server's own tokens page on.
pub async fn continue_tokens_are_checked(ctx: &Ctx) -> TestResult {
    let api = ctx.api::<ConfigMap>();
    for name in ["a", "b"] {
        api.create(&PostParams::default(), &config_map(name, &[], &[]))
            .await?;
    }
    let prefix = "invalid continue token: continue key is not valid: ";
    let garbage = get(ctx, "?limit=1&continue=!!!").await?;
    assert_eq!(
        (garbage.code, garbage.body["reason"].as_str()),
        (400, Some("BadRequest"))
    );
    assert_eq!(
        garbage.message(),
        format!("{prefix}illegal base64 data at input byte 0")
    );
    // base64url of {"v":"x","rv":5,"start":"a"}
    let other = get(
        ctx,
        "?limit=1&continue=eyJ2IjoieCIsInJ2Ijo1LCJzdGFydCI6ImEifQ",
    )
    .await?;
    assert_eq!(
        (other.code, other.message()),
        (
            400,
            format!("{prefix}server does not recognize this encoded version x").as_str()
        )
    );
    let first = get(ctx, "?limit=1").await?;
    let token = first.body["metadata"]["continue"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let second = get(ctx, &format!("?limit=1&continue={token}")).await?;
    assert_eq!(second.code, 200, "{:?}", second.body);
    assert_eq!(second.body["items"][0]["metadata"]["name"], "b");
    Ok(())
}
