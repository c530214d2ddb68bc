//! Sending sample specs of a derived kind as raw JSON (`DynamicObject`, so values serde would
//! never write reach the server) and checking the server's verdict against serde's: the
//! derive's contract, what the API server stores the Rust type reads.

use kube::api::{Api, ApiResource, DynamicObject, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::{Ctx, TestResult, api_error, code_and_reason};

/// What the server does with one sample spec.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Stored; serde reads it.
    Stored,
    /// A 422; serde refuses it too.
    Refused,
    /// A 422 although serde reads it: the server holds the type to a grammar its Rust type
    /// does not check (the reason says which).
    Stricter(&'static str),
}

fn api<K: kube::Resource<DynamicType = ()>>(ctx: &Ctx) -> Api<DynamicObject> {
    let resource = ApiResource::erase::<K>(&());
    Api::namespaced_with(ctx.client.clone(), &ctx.ns, &resource)
}

/// The object of kind `K` named `name` with `spec`, as JSON.
pub fn object<K: kube::Resource<DynamicType = ()>>(name: &str, spec: &Value) -> Value {
    json!({
        "apiVersion": K::api_version(&()),
        "kind": K::kind(&()),
        "metadata": {"name": name},
        "spec": spec,
    })
}

fn spec_of(object: &DynamicObject) -> Value {
    object.data.get("spec").cloned().unwrap_or(Value::Null)
}

/// Sends each spec as an object of kind `K` and checks the server's verdict against serde's.
/// For every stored object: serde reads the stored spec, and the spec serde writes back is
/// stored unchanged and reads back to the same value; `lossless` samples are stored exactly as
/// serde writes them (the others are canonicalized by serde, e.g. a `Time` offset written as
/// `Z`, an alias written under the field's name).
pub async fn check<K>(ctx: &Ctx, samples: &[(Value, Verdict, bool)]) -> TestResult
where
    K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
{
    let api = api::<K>(ctx);
    let send = |name: String, spec: Value| {
        let api = api.clone();
        async move {
            let object: DynamicObject = serde_json::from_value(object::<K>(&name, &spec))
                .map_err(kube::Error::SerdeError)?;
            api.create(&PostParams::default(), &object).await
        }
    };
    let spec_by_serde = |spec: &Value| -> Result<Value, String> {
        let typed: K =
            serde_json::from_value(object::<K>("serde", spec)).map_err(|e| e.to_string())?;
        let written = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
        Ok(written.get("spec").cloned().unwrap_or(Value::Null))
    };
    for (index, (spec, verdict, lossless)) in samples.iter().enumerate() {
        let by_serde = spec_by_serde(spec);
        let name = format!("sample-{index}");
        let created = send(name.clone(), spec.clone()).await;
        match verdict {
            Verdict::Refused | Verdict::Stricter(_) => {
                let status = api_error(created).map_err(|e| format!("{spec}: {e}"))?;
                assert_eq!(code_and_reason(&status), (422, "Invalid"), "{spec}");
                if *verdict == Verdict::Refused {
                    assert!(
                        by_serde.is_err(),
                        "serde reads {spec}, which the server refuses"
                    );
                } else {
                    assert!(by_serde.is_ok(), "{spec}: {by_serde:?}");
                }
            }
            Verdict::Stored => {
                let stored = spec_of(&created.map_err(|e| format!("{spec}: {e}"))?);
                let written = spec_by_serde(&stored)
                    .map_err(|e| format!("serde cannot read {stored} (sent {spec}): {e}"))?;
                if *lossless {
                    assert_eq!(written, stored, "serde changes the stored {stored}");
                }
                let again = send(format!("{name}-again"), written.clone())
                    .await
                    .map_err(|e| format!("the server refuses serde's {written}: {e}"))?;
                assert_eq!(spec_of(&again), written, "the server changes serde's JSON");
                assert_eq!(spec_by_serde(&written)?, written, "{written}");
            }
        }
    }
    Ok(())
}
