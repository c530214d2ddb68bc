//! Kinds whose names clash with prelude and common type names still compile: the derive's
//! output names every path absolutely. Each kind lives in its own module, where its generated
//! root type shadows the prelude name.

macro_rules! kind_named {
    ($module:ident, $spec:ident, $kind:literal, $plural:literal) => {
        pub mod $module {
            use kbr_runtime::CustomResource;

            #[derive(
                CustomResource,
                Clone,
                Debug,
                Default,
                PartialEq,
                ::serde::Serialize,
                ::serde::Deserialize,
                ::schemars::JsonSchema,
            )]
            #[kbr(group = "names.example.com", version = "v1", kind = $kind, plural = $plural)]
            #[kbr(
                namespaced,
                status = "Observed",
                derive = "PartialEq",
                derive = "Default"
            )]
            #[kbr(printcolumn(name = "Replicas", type_ = "integer", json_path = ".spec.replicas"))]
            #[kbr(scale(
                spec_replicas_path = ".spec.replicas",
                status_replicas_path = ".status.replicas"
            ))]
            pub struct $spec {
                pub replicas: i32,
            }

            #[derive(
                Clone,
                Debug,
                Default,
                PartialEq,
                ::serde::Serialize,
                ::serde::Deserialize,
                ::schemars::JsonSchema,
            )]
            pub struct Observed {
                pub replicas: i32,
            }
        }
    };
}

kind_named!(option, OptionSpec, "Option", "options");
kind_named!(result, ResultSpec, "Result", "results");
kind_named!(boxed, BoxSpec, "Box", "boxes");
kind_named!(vec, VecSpec, "Vec", "vecs");
kind_named!(string, StringSpec, "String", "strings");
kind_named!(service, ServiceSpec, "Service", "services");
kind_named!(type_, TypeSpec, "Type", "types");
kind_named!(condition, ConditionSpec, "Condition", "conditions");
kind_named!(error, ErrorSpec, "Error", "errors");
kind_named!(default, DefaultSpec, "Default", "defaults");
kind_named!(clone, CloneSpec, "Clone", "clones");
kind_named!(debug, DebugSpec, "Debug", "debugs");
kind_named!(serialize, SerializeSpec, "Serialize", "serializes");
kind_named!(deserialize, DeserializeSpec, "Deserialize", "deserializes");
kind_named!(resource, ResourceSpec, "Resource", "resources");
kind_named!(schema, SchemaSpec, "Schema", "schemas");
kind_named!(scope, ScopeSpec, "Scope", "scopes");
kind_named!(some, SomeSpec, "Some", "somes");
kind_named!(none, NoneSpec, "None", "nones");
kind_named!(ok, OkSpec, "Ok", "oks");
kind_named!(err, ErrSpec, "Err", "errs");
kind_named!(iter, IterSpec, "Iterator", "iterators");
kind_named!(cow, CowSpec, "Cow", "cows");
kind_named!(object_meta, ObjectMetaSpec, "ObjectMeta", "objectmetas");
kind_named!(usize_, UsizeSpec, "Usize", "usizes");

#[test]
fn clashing_kinds_compile_and_round_trip() {
    use kbr_runtime::resource::CustomResource as _;

    let option = option::Option::new("a", option::OptionSpec { replicas: 2 });
    let value = serde_json::to_value(&option).unwrap();
    assert_eq!(value["kind"], "Option");
    assert_eq!(value["apiVersion"], "names.example.com/v1");
    let back: option::Option = serde_json::from_value(value).unwrap();
    assert_eq!(back, option);

    let none = none::None::default();
    assert_eq!(none.spec.replicas, 0);
    assert_eq!(serde_json::to_value(&none).unwrap()["kind"], "None");

    let mut scheme = kbr_runtime::Scheme::new();
    scheme
        .add::<option::Option>()
        .add::<result::Result>()
        .add::<boxed::Box>()
        .add::<vec::Vec>()
        .add::<string::String>()
        .add::<service::Service>()
        .add::<type_::Type>()
        .add::<condition::Condition>()
        .add::<error::Error>()
        .add::<default::Default>()
        .add::<clone::Clone>()
        .add::<debug::Debug>()
        .add::<serialize::Serialize>()
        .add::<deserialize::Deserialize>()
        .add::<resource::Resource>()
        .add::<schema::Schema>()
        .add::<scope::Scope>()
        .add::<some::Some>()
        .add::<none::None>()
        .add::<ok::Ok>()
        .add::<err::Err>()
        .add::<iter::Iterator>()
        .add::<cow::Cow>()
        .add::<object_meta::ObjectMeta>()
        .add::<usize_::Usize>();
    assert_eq!(scheme.crds().unwrap().len(), 25);
    assert_eq!(error::Error::crd_name(), "errors.names.example.com");
    assert_eq!(result::Result::KIND, "Result");
}
