//! ConfigMaps and Secrets (`ValidateConfigMap`, `ValidateSecret` and their updates): keys, size,
//! `immutable`, Secret types and their required keys, and base64 the API server cannot read.

use serde_json::{Value, json};

use super::raw::cause;
use super::requests::{create, created, invalid, merge, sorted_causes};
use super::{Ctx, TestResult};

const KEY: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

pub async fn config_map_keys_and_size_are_validated(ctx: &Ctx) -> TestResult {
    let cm = json!({"metadata": {"name": "c1"}, "data": {"bad key": "x", "": "y", "ok": "z"},
        "binaryData": {"ok": "eA=="}});
    let answer = create(ctx, "v1", "configmaps", &cm).await?;
    assert_eq!(answer.code, 422);
    assert_eq!(
        sorted_causes(&answer),
        vec![
            cause(
                "FieldValueInvalid",
                "data[]",
                &format!(r#"Invalid value: "": {KEY}"#)
            ),
            cause(
                "FieldValueInvalid",
                "data[bad key]",
                &format!(r#"Invalid value: "bad key": {KEY}"#)
            ),
            cause(
                "FieldValueInvalid",
                "data[ok]",
                r#"Invalid value: "ok": duplicate of key present in binaryData"#
            ),
        ]
    );
    let dots = json!({"metadata": {"name": "c2"}, "data": {".": "x", "..": "y"}});
    let answer = create(ctx, "v1", "configmaps", &dots).await?;
    assert_eq!(
        sorted_causes(&answer),
        vec![
            cause(
                "FieldValueInvalid",
                "data[..]",
                r#"Invalid value: "..": must not be '..'"#
            ),
            cause(
                "FieldValueInvalid",
                "data[.]",
                r#"Invalid value: ".": must not be '.'"#
            ),
        ]
    );
    let big = json!({"metadata": {"name": "c3"}, "data": {"big": "x".repeat(1024 * 1024 + 1)}});
    let answer = create(ctx, "v1", "configmaps", &big).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueTooLong",
                "[]",
                "Too long: may not be more than 1048576 bytes"
            )]
        )
    );
    Ok(())
}

pub async fn immutable_config_maps_and_secrets_stay_as_they_are(ctx: &Ctx) -> TestResult {
    let frozen = "Forbidden: field is immutable when `immutable` is set";
    let cm = json!({"metadata": {"name": "c"}, "data": {"k": "v"}, "immutable": true});
    created(create(ctx, "v1", "configmaps", &cm).await?)?;
    let answer = merge(ctx, "v1", "configmaps", "c", &json!({"data": {"k": "w"}})).await?;
    assert_eq!(
        invalid(&answer),
        (422, vec![cause("FieldValueForbidden", "data", frozen)])
    );
    let answer = merge(ctx, "v1", "configmaps", "c", &json!({"immutable": false})).await?;
    assert_eq!(
        invalid(&answer),
        (422, vec![cause("FieldValueForbidden", "immutable", frozen)])
    );
    let labelled = merge(
        ctx,
        "v1",
        "configmaps",
        "c",
        &json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await?;
    assert_eq!(labelled.code, 200, "metadata may change: {}", labelled.body);
    let secret = json!({"metadata": {"name": "s"}, "data": {"k": "eA=="}, "immutable": true});
    created(create(ctx, "v1", "secrets", &secret).await?)?;
    let answer = merge(ctx, "v1", "secrets", "s", &json!({"data": {"k": "eQ=="}})).await?;
    assert_eq!(
        invalid(&answer),
        (422, vec![cause("FieldValueForbidden", "data", frozen)])
    );
    Ok(())
}

fn secret(name: &str, kind: &str, data: Value) -> Value {
    json!({"metadata": {"name": name}, "type": kind, "data": data})
}

pub async fn secret_types_require_their_keys_and_never_change(ctx: &Ctx) -> TestResult {
    let required = |key: &str| {
        cause(
            "FieldValueRequired",
            &format!("data[{key}]"),
            "Required value",
        )
    };
    let cases = [
        (
            "t1",
            "kubernetes.io/tls",
            json!({"tls.crt": "eA=="}),
            vec![required("tls.key")],
        ),
        (
            "d1",
            "kubernetes.io/dockerconfigjson",
            json!({}),
            vec![required(".dockerconfigjson")],
        ),
        (
            "d2",
            "kubernetes.io/dockercfg",
            json!({}),
            vec![required(".dockercfg")],
        ),
        (
            "b1",
            "kubernetes.io/basic-auth",
            json!({}),
            vec![required("username"), required("password")],
        ),
        (
            "h1",
            "kubernetes.io/ssh-auth",
            json!({}),
            vec![required("ssh-privatekey")],
        ),
        (
            "a1",
            "kubernetes.io/service-account-token",
            json!({}),
            vec![cause(
                "FieldValueRequired",
                "metadata.annotations[kubernetes.io/service-account.name]",
                "Required value",
            )],
        ),
    ];
    for (name, kind, data, expected) in cases {
        let answer = create(ctx, "v1", "secrets", &secret(name, kind, data)).await?;
        assert_eq!(invalid(&answer), (422, expected), "{kind}");
    }
    let keys = json!({"metadata": {"name": "k"}, "data": {"bad/key": "eA=="}, "stringData": {"also bad": "x"}});
    let answer = create(ctx, "v1", "secrets", &keys).await?;
    assert_eq!(
        sorted_causes(&answer),
        vec![
            cause(
                "FieldValueInvalid",
                "data[also bad]",
                &format!(r#"Invalid value: "also bad": {KEY}"#)
            ),
            cause(
                "FieldValueInvalid",
                "data[bad/key]",
                &format!(r#"Invalid value: "bad/key": {KEY}"#)
            ),
        ],
        "stringData's keys are checked as data's"
    );
    let custom = created(
        create(
            ctx,
            "v1",
            "secrets",
            &secret("c", "example.com/custom", json!({})),
        )
        .await?,
    )?;
    assert_eq!(custom["type"], json!("example.com/custom"));
    let tls = json!({"metadata": {"name": "t2"}, "type": "kubernetes.io/basic-auth",
        "stringData": {"username": "u"}});
    created(create(ctx, "v1", "secrets", &tls).await?)?;
    let answer = merge(ctx, "v1", "secrets", "t2", &json!({"type": "Opaque"})).await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause(
                "FieldValueInvalid",
                "type",
                r#"Invalid value: "Opaque": field is immutable"#
            )]
        )
    );
    Ok(())
}

pub async fn data_that_is_not_base64_is_a_bad_request(ctx: &Ctx) -> TestResult {
    for (name, value, at) in [
        ("b1", "not base64!", 3),
        ("b2", "eA=", 3),
        ("b3", "eA", 0),
        ("b4", "eA==x", 4),
    ] {
        let answer = create(
            ctx,
            "v1",
            "secrets",
            &json!({"metadata": {"name": name}, "data": {"k": value}}),
        )
        .await?;
        assert_eq!(
            (answer.code, answer.message()),
            (400, format!(r#"Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte {at}"#).as_str()),
            "{value:?}"
        );
    }
    let answer = create(
        ctx,
        "v1",
        "configmaps",
        &json!({"metadata": {"name": "c"}, "binaryData": {"k": "%%%%"}}),
    )
    .await?;
    assert_eq!(
        (answer.code, answer.message()),
        (
            400,
            r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0"#
        )
    );
    Ok(())
}

pub async fn secrets_with_their_required_keys_are_accepted(ctx: &Ctx) -> TestResult {
    let cases = [
        (
            "tls",
            "kubernetes.io/tls",
            json!({"tls.crt": "YQ==", "tls.key": "Yg=="}),
        ),
        (
            "docker",
            "kubernetes.io/dockerconfigjson",
            json!({".dockerconfigjson": "e30="}),
        ),
        (
            "ssh",
            "kubernetes.io/ssh-auth",
            json!({"ssh-privatekey": "YQ=="}),
        ),
        (
            "basic",
            "kubernetes.io/basic-auth",
            json!({"password": "YQ=="}),
        ),
    ];
    for (name, kind, data) in cases {
        let answer = create(ctx, "v1", "secrets", &secret(name, kind, data)).await?;
        assert_eq!(answer.code, 201, "{kind}: {}", answer.body);
    }
    let token = json!({"metadata": {"name": "token",
        "annotations": {"kubernetes.io/service-account.name": "default"}},
        "type": "kubernetes.io/service-account-token"});
    created(create(ctx, "v1", "secrets", &token).await?)?;
    let answer = create(
        ctx,
        "v1",
        "secrets",
        &secret(
            "bad-json",
            "kubernetes.io/dockerconfigjson",
            json!({".dockerconfigjson": "bm90IGpzb24="}),
        ),
    )
    .await?;
    let causes: Vec<(String, String)> = answer.causes().into_iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(
        (answer.code, causes),
        (
            422,
            vec![("FieldValueInvalid".into(), "data[.dockerconfigjson]".into())]
        ),
        "the config must be JSON (the message is Go's JSON error on the real server)"
    );
    Ok(())
}

pub async fn immutable_stays_set_and_freezes_binary_data(ctx: &Ctx) -> TestResult {
    let frozen = "Forbidden: field is immutable when `immutable` is set";
    let cm = json!({"metadata": {"name": "c"}, "binaryData": {"b": "eA=="}, "immutable": true});
    created(create(ctx, "v1", "configmaps", &cm).await?)?;
    let answer = merge(
        ctx,
        "v1",
        "configmaps",
        "c",
        &json!({"binaryData": {"b": "eQ=="}}),
    )
    .await?;
    assert_eq!(
        invalid(&answer),
        (
            422,
            vec![cause("FieldValueForbidden", "binaryData", frozen)]
        )
    );
    let secret = json!({"metadata": {"name": "s"}, "data": {"k": "eA=="}, "immutable": true});
    created(create(ctx, "v1", "secrets", &secret).await?)?;
    let answer = merge(ctx, "v1", "secrets", "s", &json!({"immutable": null})).await?;
    assert_eq!(
        invalid(&answer),
        (422, vec![cause("FieldValueForbidden", "immutable", frozen)])
    );
    // A mutable one may become immutable.
    created(
        create(
            ctx,
            "v1",
            "configmaps",
            &json!({"metadata": {"name": "m"}, "data": {"a": "b"}}),
        )
        .await?,
    )?;
    let answer = merge(
        ctx,
        "v1",
        "configmaps",
        "m",
        &json!({"immutable": true, "data": {"a": "c"}}),
    )
    .await?;
    assert_eq!(
        (answer.code, &answer.body["data"]),
        (200, &json!({"a": "c"}))
    );
    Ok(())
}
