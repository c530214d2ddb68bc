//! Expansion and error tests: every misuse is a `syn::Error` naming the fix, at the span of
//! the offending tokens.

use proc_macro2::TokenStream;
use quote::quote;

/// `(message, source text of the span)` of every error the derive reports for `input`.
fn errors(
    expand: fn(&syn::DeriveInput) -> syn::Result<TokenStream>,
    input: TokenStream,
) -> Vec<(String, String)> {
    // Re-parse from text so spans have source locations (`quote!` spans have none).
    let input: syn::DeriveInput = syn::parse_str(&input.to_string()).expect("test input parses");
    match expand(&input) {
        Ok(_) => Vec::new(),
        Err(error) => error
            .into_iter()
            .map(|e| (e.to_string(), e.span().source_text().unwrap_or_default()))
            .collect(),
    }
}

fn cr_errors(input: TokenStream) -> Vec<(String, String)> {
    errors(crate::custom_resource::expand, input)
}

fn rbac_errors(input: TokenStream) -> Vec<(String, String)> {
    errors(crate::rbac::expand, input)
}

#[track_caller]
fn assert_error(found: &[(String, String)], message: &str, span: &str) {
    assert!(
        found.iter().any(|(m, s)| m.contains(message) && s == span),
        "expected an error containing {message:?} at {span:?}, got {found:#?}"
    );
}

#[test]
fn minimal_input_expands() {
    let input: syn::DeriveInput = syn::parse2(quote! {
        #[kbr(group = "eventing.knative.dev", version = "v1alpha1", kind = "Broker", plural = "brokers")]
        #[kbr(namespaced, status = "BrokerStatus")]
        pub struct BrokerSpec { pub foo: Option<String> }
    })
    .unwrap();
    let tokens = crate::custom_resource::expand(&input).unwrap();
    assert_paths_are_absolute(tokens.clone());
    let output = tokens.to_string();
    for expected in [
        "pub struct Broker",
        "impl :: kbr_runtime :: kube :: Resource for Broker",
        ":: kbr_runtime :: kube :: core :: NamespaceResourceScope",
        "impl :: kbr_runtime :: resource :: CustomResource for Broker",
        "status : :: core :: option :: Option < BrokerStatus >",
        ". namespaced () . status_subresource ()",
    ] {
        assert!(
            output.contains(expected),
            "missing {expected:?} in {output}"
        );
    }
}

/// Every prelude/std name in the output is reached through a path (`::core::option::Option`),
/// never bare, so kinds with those names cannot capture it.
fn assert_paths_are_absolute(tokens: TokenStream) {
    use proc_macro2::TokenTree;
    const NAMES: &[&str] = &[
        "Option",
        "Some",
        "None",
        "Result",
        "Ok",
        "Err",
        "Vec",
        "String",
        "Box",
        "Default",
        "Clone",
        "Debug",
        "Cow",
        "ToOwned",
        "PartialEq",
        "Serialize",
        "Deserialize",
        "ObjectMeta",
        "str",
        "usize",
    ];
    fn walk(tokens: TokenStream, previous: &mut Option<TokenTree>) {
        for token in tokens {
            match &token {
                TokenTree::Group(group) => {
                    *previous = None;
                    walk(group.stream(), previous);
                }
                TokenTree::Ident(ident) if NAMES.contains(&ident.to_string().as_str()) => {
                    let qualified =
                        matches!(previous, Some(TokenTree::Punct(p)) if p.as_char() == ':');
                    assert!(qualified, "bare `{ident}` in derive output");
                }
                _ => {}
            }
            *previous = Some(token);
        }
    }
    walk(tokens, &mut None);
}

#[test]
fn unknown_keys_suggest_the_right_one() {
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo", shortName = "f")]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "unknown `#[kbr(...)]` key `shortName`; did you mean `shortname`?",
        "shortName",
    );
    let found = cr_errors(quote! {
        #[kbr(grop = "a.example.com", version = "v1", kind = "Foo")]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "unknown `#[kbr(...)]` key `grop`; did you mean `group`? expected one of: group,",
        "grop",
    );
}

#[test]
fn wrong_value_types_point_at_the_value() {
    let found = cr_errors(quote! {
        #[kbr(group = 5, version = "v1", kind = "Foo")]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "`group` takes a string literal: write `group = \"eventing.knative.dev\"`",
        "5",
    );
    assert_eq!(found.len(), 1, "no extra 'missing group' error: {found:?}");
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo", namespaced = "yes")]
        struct FooSpec {}
    });
    assert_error(&found, "`namespaced` takes `true` or `false`", "\"yes\"");
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo", categories = [1])]
        struct FooSpec {}
    });
    assert_error(&found, "`categories` takes string literals", "1");
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo", label("k"))]
        struct FooSpec {}
    });
    assert_error(&found, "`label` takes exactly a key and a value", "\"k\"");
}

#[test]
fn missing_required_keys_are_named() {
    let found = cr_errors(quote! {
        #[kbr(version = "v1")]
        struct FooSpec {}
    });
    assert_error(&found, "needs group, kind in #[kbr(...)]", "FooSpec");
    let found = cr_errors(quote! {
        struct FooSpec {}
    });
    assert_error(&found, "needs group, version, kind", "FooSpec");
}

#[test]
fn kind_equal_to_the_struct_name_is_rejected() {
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        struct Foo {}
    });
    assert_error(&found, "rename the struct to `FooSpec`", "\"Foo\"");
}

#[test]
fn only_structs_with_named_fields() {
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        enum FooSpec { A }
    });
    assert_error(&found, "goes on a Spec struct with named fields", "enum");
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        struct FooSpec(String);
    });
    assert_error(
        &found,
        "goes on a Spec struct with named fields",
        "(String)",
    );
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        struct FooSpec;
    });
    assert_error(&found, "goes on a Spec struct with named fields", "FooSpec");
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        struct FooSpec<T> { t: T }
    });
    assert_error(&found, "does not support generic Spec structs", "< T >");
}

#[test]
fn names_are_validated() {
    let found = cr_errors(quote! {
        #[kbr(group = "eventing", version = "V1", kind = "foo", plural = "Foos", shortname = "f_1")]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "`group` should be a domain with at least one dot",
        "\"eventing\"",
    );
    assert_error(
        &found,
        "`version` \"V1\" is invalid: a DNS-1035 label must consist of",
        "\"V1\"",
    );
    assert_error(
        &found,
        "`kind` must start with an upper-case ASCII letter",
        "\"foo\"",
    );
    assert_error(
        &found,
        "`plural` \"Foos\" is invalid: a DNS-1035 label must consist of",
        "\"Foos\"",
    );
    assert_error(
        &found,
        "short name \"f_1\" is invalid: a DNS-1035 label must consist of",
        "\"f_1\"",
    );
    assert_eq!(found.len(), 5, "{found:#?}");
}

#[test]
fn printcolumns_and_scale_are_validated() {
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        #[kbr(printcolumn(name = "Age", type_ = "time", json_path = "metadata.creationTimestamp", format = "iso"))]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "printcolumn `type_` must be one of integer, number, string, boolean, date",
        "\"time\"",
    );
    assert_error(
        &found,
        "printcolumn `json_path` must be a JSONPath starting with '.'",
        "\"metadata.creationTimestamp\"",
    );
    assert_error(&found, "printcolumn `format` must be one of", "\"iso\"");
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        #[kbr(printcolumn(name = "Age", json_path = ".metadata.creationTimestamp", colour = "red"))]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "unknown `#[kbr(printcolumn(...)]` key `colour`",
        "colour",
    );
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        #[kbr(printcolumn(name = "Age", json_path = ".metadata.creationTimestamp"))]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "`printcolumn` needs `type_`",
        "printcolumn (name = \"Age\" , json_path = \".metadata.creationTimestamp\")",
    );
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        #[kbr(scale(spec_replicas_path = ".status.replicas", status_replicas_path = ".status.replicas"))]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "`spec_replicas_path` must be a JSONPath under .spec.",
        "\".status.replicas\"",
    );
}

#[test]
fn repeated_single_keys_are_rejected() {
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo")]
        #[kbr(group = "b.example.com")]
        struct FooSpec {}
    });
    assert_error(
        &found,
        "`group` is given twice; keep one",
        "group = \"b.example.com\"",
    );
}

#[test]
fn errors_from_several_attributes_are_all_reported() {
    let found = cr_errors(quote! {
        #[kbr(group = "a.example.com", version = "v1", kind = "Foo", colour = "red")]
        #[kbr(status = 3)]
        struct FooSpec {}
    });
    assert_eq!(found.len(), 2, "{found:#?}");
}

#[test]
fn rbac_markers_are_validated() {
    let found = rbac_errors(quote! {
        #[rbac(groups = ["apps"], resources = ["deployments"])]
        struct R;
    });
    assert_error(
        &found,
        "#[rbac(...)] needs `verbs`",
        "# [rbac (groups = [\"apps\"] , resources = [\"deployments\"])]",
    );
    let found = rbac_errors(quote! {
        #[rbac(groups = ["apps"], urls = ["/metrics"], verbs = ["get"])]
        struct R;
    });
    assert!(
        found[0]
            .0
            .contains("`urls` (non-resource URLs) cannot be combined"),
        "{found:?}"
    );
    let found = rbac_errors(quote! {
        #[rbac(urls = ["/metrics"], verbs = ["get"], namespace = "ns")]
        struct R;
    });
    assert!(
        found[0].0.contains("only granted by a ClusterRole"),
        "{found:?}"
    );
    let found = rbac_errors(quote! {
        #[rbac(groups = ["apps"], verbs = ["get"])]
        struct R;
    });
    assert!(
        found[0].0.contains("names neither `resources` nor `urls`"),
        "{found:?}"
    );
    let found = rbac_errors(quote! {
        #[rbac(group = ["apps"], resources = ["deployments"], verbs = ["get"])]
        struct R;
    });
    assert_error(
        &found,
        "unknown `#[rbac(...)]` key `group`; did you mean `groups`?",
        "group",
    );
    let found = rbac_errors(quote! {
        #[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get])]
        struct R;
    });
    assert_error(&found, "`verbs` takes string literals", "get");
}

#[test]
fn rbac_expands_to_the_trait_and_an_inherent_fn() {
    let input: syn::DeriveInput = syn::parse2(quote! {
        #[rbac(groups = ["apps"], resources = ["deployments"], verbs = "get;list")]
        pub struct R<T> { t: T }
    })
    .unwrap();
    let output = crate::rbac::expand(&input).unwrap().to_string();
    assert!(
        output.contains("impl < T > :: kbr_runtime :: rbac :: Rbac for R < T >"),
        "{output}"
    );
    assert!(
        output.contains("Rule :: new ([\"get\" , \"list\"]) . groups ([\"apps\"])"),
        "{output}"
    );
    assert!(output.contains("pub fn rbac_rules ()"), "{output}");
}

#[test]
#[should_panic(expected = "bare `Option` in derive output")]
fn the_absolute_path_check_catches_bare_names() {
    assert_paths_are_absolute(quote!(
        fn f() -> ::core::option::Option<Option<u8>> {
            None
        }
    ));
}
