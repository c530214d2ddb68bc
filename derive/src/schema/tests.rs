//! Expansion and error tests of `#[schema]`: every misuse is a `syn::Error` naming the fix,
//! at the span of the offending tokens.

use proc_macro2::TokenStream;
use quote::quote;

use crate::parse::Errors;

/// `(message, source text of the span)` of every error `#[schema]` reports for `item`.
fn errors(item: TokenStream) -> Vec<(String, String)> {
    // Re-parse from text so spans have source locations (`quote!` spans have none).
    let mut input: syn::DeriveInput = syn::parse_str(&item.to_string()).expect("test input parses");
    let mut errors = Errors::default();
    super::rewrite(&mut input, &mut errors);
    match errors.finish() {
        Ok(()) => Vec::new(),
        Err(error) => error
            .into_iter()
            .map(|e| (e.to_string(), e.span().source_text().unwrap_or_default()))
            .collect(),
    }
}

#[track_caller]
fn assert_error(found: &[(String, String)], message: &str, span: &str) {
    assert!(
        found.iter().any(|(m, s)| m.contains(message) && s == span),
        "expected an error containing {message:?} at {span:?}, got {found:#?}"
    );
}

/// A struct deriving JsonSchema with `fields`.
fn with_fields(fields: TokenStream) -> Vec<(String, String)> {
    errors(quote! {
        #[derive(JsonSchema)]
        struct S { #fields }
    })
}

#[test]
fn markers_become_schemars_records_and_resource_attributes_stay() {
    let input = rewritten(quote! {
        #[derive(CustomResource, JsonSchema)]
        #[kbr(group = "example.com", version = "v1", kind = "Foo", exactly_one_of = [a, b])]
        #[serde(rename_all = "camelCase")]
        struct FooSpec {
            #[kbr(minimum = -1, enum = [1, 2.5])]
            a: Option<f64>,
            #[kbr(default = {"x": [true, null]})]
            c: Option<serde_json::Value>,
            #[kbr(validation(rule = "self != ''", message = "empty"))]
            long_name: Option<String>,
            b: Option<String>,
        }
    });
    let output = quote!(#input).to_string();
    for expected in [
        "# [kbr (group = \"example.com\" , version = \"v1\" , kind = \"Foo\")]",
        "# [schemars (extend (\"x-kbr-type\" = { \"exactlyOneOf\" : [[\"a\" , \"b\"]] , \"name\" : \"FooSpec\" }))]",
        "\"minimum\" : - 1",
        "\"enum\" : [1 , 2.5]",
        "\"default\" : { \"x\" : [true , null] }",
        "\"validations\" : [{ \"message\" : \"empty\" , \"rule\" : \"self != ''\" }]",
    ] {
        assert!(
            output.contains(expected),
            "missing {expected:?} in {output}"
        );
    }
    assert!(!output.contains("# [kbr (minimum"), "{output}");
}

#[test]
fn unknown_markers_suggest_the_right_one() {
    let found = with_fields(quote!(#[kbr(minLength = 1)] a: String,));
    assert_error(
        &found,
        "unknown schema marker `minLength`. Did you mean `min_length`?",
        "minLength",
    );
    let found = with_fields(quote!(#[kbr(rule = "self > 0")] a: i32,));
    assert_error(&found, "written `validation(rule = ", "rule");
    let found = with_fields(quote!(#[kbr(group = "x")] a: i32,));
    assert_error(&found, "`group` is a resource attribute", "group");
}

#[test]
fn wrong_value_types_point_at_the_value() {
    let found = with_fields(quote!(#[kbr(max_length = "5")] a: String,));
    assert_error(&found, "`max_length` takes a non-negative integer", "\"5\"");
    let found = with_fields(quote!(#[kbr(minimum = "1")] a: i32,));
    assert_error(&found, "`minimum` takes a number", "\"1\"");
    let found = with_fields(quote!(#[kbr(list_type = "bag")] a: Vec<String>,));
    assert_error(
        &found,
        "`list_type` takes one of \"atomic\", \"set\", \"map\"",
        "\"bag\"",
    );
    let found = with_fields(quote!(#[kbr(format = "datetme")] a: String,));
    assert_error(&found, "unknown format \"datetme\"", "\"datetme\"");
    let found = with_fields(quote!(#[kbr(enum = [])] a: String,));
    assert_error(&found, "`enum` takes a non-empty list", "[]");
    let found = with_fields(quote!(#[kbr(nullable = "yes")] a: String,));
    assert_error(&found, "`nullable` takes `true` or `false`", "\"yes\"");
    let found = with_fields(quote!(#[kbr(default = {x: 1})] a: String,));
    assert_error(&found, "object keys are string literals", "x");
}

#[test]
fn markers_that_cannot_apply_to_the_field_type() {
    let found = with_fields(quote!(#[kbr(min_length = 1)] replicas: Option<i32>,));
    assert_error(
        &found,
        "`min_length` (controller-gen `validation:MinLength`) applies to strings, but field \
         `replicas` (`Option<i32>`) is an integer",
        "min_length",
    );
    let found = with_fields(quote!(#[kbr(max_items = 1)] a: String,));
    assert_error(&found, "applies to lists", "max_items");
    let found = with_fields(quote!(#[kbr(int_or_string)] a: String,));
    assert_error(
        &found,
        "applies to types that serialize as an integer or a string",
        "int_or_string",
    );
    let found = with_fields(quote!(#[kbr(default = "x")] a: i32,));
    assert_error(
        &found,
        "this default is a string, but field `a` (`i32`) is an integer",
        "\"x\"",
    );
    let found = with_fields(quote!(#[kbr(enum = ["a", 1])] a: String,));
    assert_error(&found, "this enum value is an integer", "[\"a\" , 1]");
    let found = with_fields(quote!(#[kbr(items(minimum = 1))] a: Vec<String>,));
    assert_error(
        &found,
        "applies to integers and numbers, but the items of field `a`",
        "minimum",
    );
    let found = with_fields(quote!(#[kbr(items(max_length = 1))] a: String,));
    assert_error(&found, "`items(...)` marks the items of a list", "items");
}

#[test]
fn contradicting_markers() {
    let found = with_fields(quote!(#[kbr(list_map_keys = ["name"])] a: Vec<String>,));
    assert_error(
        &found,
        "`list_map_keys` needs `list_type = \"map\"`",
        "list_map_keys",
    );
    let found = with_fields(quote!(#[kbr(list_type = "map")] a: Vec<String>,));
    assert_error(&found, "needs `list_map_keys", "list_type");
    let found = with_fields(quote!(#[kbr(minimum = 5, maximum = 1)] a: i32,));
    assert_error(&found, "`maximum` (1) is below `minimum` (5)", "1");
    let found = with_fields(quote!(#[kbr(exclusive_minimum)] a: i32,));
    assert_error(&found, "there is no `minimum`", "exclusive_minimum");
    let found = with_fields(quote!(#[kbr(required, optional)] a: i32,));
    assert_error(&found, "contradict each other", "optional");
    let found = with_fields(quote!(#[kbr(minimum = 1, minimum = 2)] a: i32,));
    assert_error(&found, "`minimum` is given twice", "minimum");
}

#[test]
fn markers_in_the_wrong_place() {
    let found = with_fields(quote!(#[kbr(exactly_one_of = [a])] a: Option<i32>,));
    assert_error(
        &found,
        "`exactly_one_of` goes on the struct",
        "exactly_one_of",
    );
    let found = errors(quote! {
        #[derive(JsonSchema)]
        #[kbr(default = 1)]
        struct S { a: i32 }
    });
    assert_error(
        &found,
        "`default` goes on fields, not on struct `S`",
        "default",
    );
    let found = errors(quote! {
        #[derive(JsonSchema)]
        #[kbr(exactly_one_of = [a, nope])]
        #[serde(rename_all = "camelCase")]
        struct S { a_b: Option<i32>, a: Option<i32> }
    });
    assert_error(
        &found,
        "struct `S` has no field `nope`; its fields are `a_b` (\"aB\"), `a`",
        "nope",
    );
    let found = with_fields(quote!(#[kbr(minimum = 1)] #[serde(flatten)] a: Inner,));
    assert_error(&found, "is #[serde(flatten)]", "# [kbr (minimum = 1)]");
    let found = errors(quote! {
        #[derive(JsonSchema)]
        enum E { #[kbr(minimum = 1)] A(i32) }
    });
    assert_error(&found, "not on a variant itself", "# [kbr (minimum = 1)]");
}

#[test]
fn cel_rules_are_validated() {
    let found = with_fields(quote!(#[kbr(validation(message = "x"))] a: i32,));
    assert_error(&found, "`validation(...)` needs a `rule`", "validation");
    let found = with_fields(quote!(#[kbr(validation(rule = "self > 0", reason = "Bad"))] a: i32,));
    assert_error(
        &found,
        "`reason` must be one of FieldValueInvalid",
        "\"Bad\"",
    );
    let found = with_fields(quote!(#[kbr(validation(rule = "self > 0", mesage = "x"))] a: i32,));
    assert_error(&found, "did you mean `message`?", "mesage");
}

#[test]
fn field_paths_are_what_the_api_server_accepts() {
    // apiextensions-apiserver's ValidFieldPath: `.name` and `['name']` steps, nothing else.
    for path in [".a", "['a']", ".a['b.c'].d", "['a'].b"] {
        let found = with_fields(quote!(
            #[kbr(validation(rule = "true", field_path = #path))] a: i32,
        ));
        assert_eq!(found, [], "{path:?} refused");
    }
    for (path, reason) in [
        ("a", "expected [ or . but got: a"),
        (".items[0]", "expected single quoted string but got 0"),
        (".a.", "unexpected end of JSON path"),
    ] {
        let found = with_fields(quote!(
            #[kbr(validation(rule = "true", field_path = #path))] a: i32,
        ));
        let message = format!("`field_path = \"{path}\"` is not a JSON path ({reason})");
        assert_error(&found, &message, &format!("{path:?}"));
        assert_error(&found, "`.name` or `['name']` steps", &format!("{path:?}"));
    }
    let found = with_fields(quote!(
        #[kbr(validation(rule = "true", field_path = ".a\nb"))] a: i32,
    ));
    assert_error(
        &found,
        "`field_path` must not contain line breaks",
        "\".a\\nb\"",
    );
}

#[test]
fn the_attribute_needs_the_json_schema_derive_below_it() {
    let found = errors(quote! {
        #[derive(Serialize)]
        struct S { #[kbr(minimum = 1)] a: i32 }
    });
    assert_error(&found, "must sit above `#[derive(..., JsonSchema)]`", "S");
}

#[test]
fn custom_resource_without_the_attribute_explains_it() {
    let input: syn::DeriveInput = syn::parse_str(
        "#[kbr(group = \"a.b\", version = \"v1\", kind = \"Foo\")] struct FooSpec { #[kbr(minimum = 1)] a: i32 }",
    )
    .unwrap();
    let error = crate::custom_resource::expand(&input).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("field markers need `#[kbr_runtime::schema]`"),
        "{error}"
    );
    let input: syn::DeriveInput = syn::parse_str(
        "#[kbr(group = \"a.b\", version = \"v1\", kind = \"Foo\", exactly_one_of = [a])] struct FooSpec { a: i32 }",
    )
    .unwrap();
    let error = crate::custom_resource::expand(&input).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("`exactly_one_of` is a schema marker"),
        "{error}"
    );
}

#[test]
fn byte_string_fields_get_their_schema() {
    let input = rewritten(quote! {
        #[derive(JsonSchema)]
        struct Secret {
            /// The key.
            key: k8s_openapi::ByteString,
            certs: Option<Vec<ByteString>>,
            name: String,
            #[schemars(with = "String")]
            custom: ByteString,
        }
    });
    let syn::Data::Struct(data) = &input.data else {
        panic!("a struct");
    };
    let with: Vec<Vec<String>> = data
        .fields
        .iter()
        .map(|field| {
            field
                .attrs
                .iter()
                .map(|attr| quote!(#attr).to_string())
                .filter(|attr| attr.contains("with"))
                .collect()
        })
        .collect();
    assert_eq!(
        with,
        [
            vec![r#"# [schemars (with = ":: kbr_runtime :: crd :: ByteStringSchema")]"#.to_owned()],
            vec![
                r#"# [schemars (with = "Option < Vec < :: kbr_runtime :: crd :: ByteStringSchema > >")]"#
                    .to_owned()
            ],
            vec![],
            vec![r#"# [schemars (with = "String")]"#.to_owned()],
        ]
    );
}

/// `item` after `#[schema]`, which must report no error.
fn rewritten(item: TokenStream) -> syn::DeriveInput {
    let mut input: syn::DeriveInput = syn::parse2(item).expect("test input parses");
    let mut errors = Errors::default();
    super::rewrite(&mut input, &mut errors);
    assert!(errors.finish().is_ok());
    input
}

/// The `#[schemars(extend("x-kbr-aliases" = ...))]` attributes of `attrs`, as text.
fn alias_records(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .map(|attr| quote!(#attr).to_string().replace(' ', ""))
        .filter(|attr| attr.contains("x-kbr-aliases"))
        .collect()
}

#[test]
fn aliases_of_fields_and_variants_go_into_the_schema() {
    let input = rewritten(quote! {
        #[derive(JsonSchema)]
        #[serde(tag = "kind")]
        enum Action {
            #[serde(alias = "Execute", alias = "Exec")]
            Run {
                #[serde(alias = "cmd")]
                command: String,
                #[serde(skip, alias = "gone")]
                hidden: String,
            },
            Stop,
        }
    });
    let syn::Data::Enum(data) = &input.data else {
        panic!("an enum");
    };
    let run = &data.variants[0];
    assert_eq!(
        alias_records(&run.attrs),
        [r#"#[schemars(extend("x-kbr-aliases"={"names":["Execute","Exec"],"tag":"kind"}))]"#]
    );
    assert!(alias_records(&data.variants[1].attrs).is_empty());
    let fields: Vec<Vec<String>> = run
        .fields
        .iter()
        .map(|field| alias_records(&field.attrs))
        .collect();
    assert_eq!(
        fields,
        [
            vec![r#"#[schemars(extend("x-kbr-aliases"={"names":["cmd"]}))]"#.to_owned()],
            vec![]
        ]
    );
}

#[test]
fn untagged_enums_have_no_variant_aliases() {
    let input = rewritten(quote! {
        #[derive(JsonSchema)]
        #[serde(untagged)]
        enum Either {
            #[serde(alias = "l")]
            Left(String),
            Right(i32),
        }
    });
    let syn::Data::Enum(data) = &input.data else {
        panic!("an enum");
    };
    assert!(alias_records(&data.variants[0].attrs).is_empty());
}

#[test]
fn a_default_beside_an_alias_is_an_error() {
    let found = with_fields(quote! {
        #[kbr(default = 3)]
        #[serde(alias = "count")]
        replicas: i32,
    });
    assert_error(
        &found,
        "has #[serde(alias)] and a `default` marker",
        "default",
    );
}
