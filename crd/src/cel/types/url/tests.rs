use super::Url;

fn request(raw: &str) -> Result<Url, String> {
    Url::parse_request_uri(raw)
}

#[test]
fn request_uris_are_absolute_uris_or_absolute_paths() {
    for (raw, error) in [
        ("", r#"parse "": empty url"#),
        ("x", r#"parse "x": invalid URI for request"#),
        (
            "example.com",
            r#"parse "example.com": invalid URI for request"#,
        ),
        (":x", r#"parse ":x": missing protocol scheme"#),
        (
            "http://a b/",
            r#"parse "http://a b/": invalid character " " in host name"#,
        ),
        (
            "http://%41.com",
            r#"parse "http://%41.com": invalid URL escape "%41""#,
        ),
        (
            "http://x/%zz",
            r#"parse "http://x/%zz": invalid URL escape "%zz""#,
        ),
        (
            "http://x:port",
            r#"parse "http://x:port": invalid port ":port" after host"#,
        ),
        ("http://[::1", r#"parse "http://[::1": missing ']' in host"#),
        (
            "http://[1.2.3.4]/",
            r#"parse "http://[1.2.3.4]/": invalid IP-literal"#,
        ),
        (
            "http://a\n",
            r#"parse "http://a\n": net/url: invalid control character in URL"#,
        ),
    ] {
        assert_eq!(request(raw).err().as_deref(), Some(error), "{raw:?}");
    }
    for raw in [
        "/",
        "/x?y",
        "http://x",
        "mailto:x@y",
        "*",
        "http://[::1]:80/",
        "//x/y",
    ] {
        assert!(request(raw).is_ok(), "{raw}");
    }
}

#[test]
fn parts() {
    let url =
        Url::parse("HTTP://user:pw@Example.com:8080/a%20b/c?x=1&x=2&y=%41+b#frag").expect("a URL");
    assert_eq!(url.scheme(), "http");
    assert_eq!(url.host(), "Example.com:8080");
    assert_eq!(url.hostname(), "Example.com");
    assert_eq!(url.port(), "8080");
    assert_eq!(url.escaped_path(), "/a%20b/c");
    let query = url.query();
    assert_eq!(query["x"], ["1", "2"]);
    assert_eq!(query["y"], ["A b"]);
    assert_eq!(
        url.to_string(),
        "http://user:pw@Example.com:8080/a%20b/c?x=1&x=2&y=%41+b#frag"
    );
    let v6 = Url::parse("http://[fe80::1%25eth0]:80/").expect("a URL");
    assert_eq!(v6.hostname(), "fe80::1%eth0");
    assert_eq!(
        Url::parse("http://x/a+b").expect("a URL").escaped_path(),
        "/a+b"
    );
}
