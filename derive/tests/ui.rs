//! Compile-time misuse of `#[derive(CustomResource)]` and `#[schema]` (re-exported as
//! `kbr_runtime::schema`): each case under `tests/ui/` must fail with the message and span
//! recorded in its `.stderr` file (regenerate with `TRYBUILD=overwrite`, then review every
//! change). The cases need only schemars and serde: the macros fail before their output would
//! name `::kbr_runtime`.

#[test]
fn misuse_is_a_clear_compile_error() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
