//! The cases of apimachinery's `pkg/api/validate/content/dns_test.go` (`TestIsDNS1123Label`,
//! `TestIsDNS1123Subdomain`) and the messages of `validation.go`.

use super::*;

#[test]
fn labels_as_apimachinery_tests_them() {
    let long = "a".repeat(63);
    let good = [
        "a",
        "ab",
        "abc",
        "a1",
        "a-1",
        "a--1--2--b",
        "0",
        "01",
        "012",
        "1a",
        "1-a",
        "1--a--b--2",
        long.as_str(),
    ];
    for value in good {
        assert_eq!(dns1123_label(value), Ok(()), "{value:?}");
    }
    let too_long = "a".repeat(64);
    let bad = [
        "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a",
        "a_b", "1_", "_1", "1_2", ".", "a.", ".a", "a.b", "1.", ".1", "1.2", " ", "a ", " a",
        "a b", "1 ", " 1", "1 2",
    ];
    for value in bad.into_iter().chain([too_long.as_str()]) {
        assert!(dns1123_label(value).is_err(), "{value:?}");
    }
}

#[test]
fn subdomains_as_apimachinery_tests_them() {
    let long = "a".repeat(253);
    let good = [
        "a",
        "a--1--2--b",
        "0",
        "012",
        "1--a--b--2",
        "a.a",
        "a--1--2--b.a",
        "a.1",
        "a--1--2--b.1",
        "0.a",
        "1-a.a",
        "0.1",
        "1--a--b--2.1",
        "a.b.c.d.e",
        "aa.bb.cc.dd.ee",
        "1.2.3.4.5",
        "11.22.33.44.55",
        long.as_str(),
    ];
    for value in good {
        assert_eq!(dns1123_subdomain(value), Ok(()), "{value:?}");
    }
    let too_long = "a".repeat(254);
    let bad = [
        "",
        "A",
        "aBc",
        "1-A",
        "-",
        "a-",
        "-a",
        "1-",
        "-1",
        "_",
        "a_b",
        "_1",
        ".",
        "a.",
        ".a",
        "a..b",
        "1.",
        ".1",
        "1..2",
        " ",
        "a b",
        "A.a",
        "ab.A",
        "0.A",
        "A.B.C.D.E",
        "aa.bB.cc.dd.ee",
        "a@b",
        "a,b",
        "a;b",
        "a:b",
        "a%b",
        "a?b",
        "a$b",
    ];
    for value in bad.into_iter().chain([too_long.as_str()]) {
        assert!(dns1123_subdomain(value).is_err(), "{value:?}");
    }
}

#[test]
fn dns1035_labels_start_with_a_letter() {
    for value in ["a", "abc-123", "my-name", "v1alpha1"] {
        assert_eq!(dns1035_label(value), Ok(()), "{value:?}");
    }
    for value in ["", "1abc", "-a", "a-", "Abc", "a.b", "a_b"] {
        assert!(dns1035_label(value).is_err(), "{value:?}");
    }
    assert!(dns1035_label(&"a".repeat(64)).is_err());
}

#[test]
fn messages_are_apimachinerys() {
    assert_eq!(
        dns1123_subdomain("Bad_Name").unwrap_err().to_string(),
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' \
         or '.', and must start and end with an alphanumeric character (e.g. 'example.com', \
         regex used for validation is \
         '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    );
    assert_eq!(
        dns1123_label("a.b").unwrap_err().messages(),
        ["must not contain dots"]
    );
    assert_eq!(
        dns1123_label("A").unwrap_err().to_string(),
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', \
         and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', \
         regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    );
    assert_eq!(
        dns1035_label("1abc").unwrap_err().to_string(),
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with \
         an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or \
         'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    );
    // Too long and malformed: both messages, length first; `Display` joins them with ",".
    let error = dns1123_label(&format!("{}_", "a".repeat(63))).unwrap_err();
    assert_eq!(error.messages().len(), 2);
    assert_eq!(error.messages()[0], "must be no more than 63 characters");
    assert!(
        error
            .to_string()
            .starts_with("must be no more than 63 characters,a lowercase RFC 1123 label")
    );
    assert_eq!(
        dns1123_subdomain(&"a".repeat(254)).unwrap_err().messages(),
        ["must be no more than 253 characters"]
    );
}

#[test]
fn path_segments_refuse_dots_slashes_and_percent_signs() {
    assert!(path_segment_name("Upper_Case.ok", false).is_ok());
    assert_eq!(
        path_segment_name("..", false).map_err(|e| e.to_string()),
        Err("may not be '..'".to_owned())
    );
    assert!(path_segment_name("..", true).is_ok());
    assert_eq!(
        path_segment_name("a/b%", true).map_err(|e| e.messages().to_vec()),
        Err(vec!["may not contain '/'", "may not contain '%'"])
    );
}
