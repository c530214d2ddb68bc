//! English plurals of lower-cased kinds, for the default `plural`.
//!
//! Kubebuilder pluralises with gobuffalo/flect; this covers the same common cases: a table of
//! irregular and uncountable words, then suffix rules (`-s/-x/-z/-ch/-sh` + `es`, consonant + `y`
//! -> `ies`, `-is` -> `es`, `-f(e)` -> `ves` for a few words, otherwise + `s`). The kbr CLI always
//! passes `plural` explicitly, so this only matters for hand-written types.

/// Irregular plurals, matched against the end of the word (so `ClusterPerson` -> `clusterpeople`).
const IRREGULAR_SUFFIXES: &[(&str, &str)] = &[
    ("person", "people"),
    ("child", "children"),
    ("woman", "women"),
    ("mouse", "mice"),
    ("goose", "geese"),
    ("tooth", "teeth"),
    ("foot", "feet"),
    ("criterion", "criteria"),
    ("phenomenon", "phenomena"),
    ("index", "indices"),
    ("matrix", "matrices"),
    ("vertex", "vertices"),
    ("appendix", "appendices"),
    ("cactus", "cacti"),
    ("focus", "foci"),
    ("radius", "radii"),
    ("syllabus", "syllabi"),
    ("alumnus", "alumni"),
    ("datum", "data"),
    ("medium", "media"),
    ("quiz", "quizzes"),
    ("leaf", "leaves"),
    ("knife", "knives"),
    ("life", "lives"),
    ("wife", "wives"),
    ("wolf", "wolves"),
    ("half", "halves"),
    ("shelf", "shelves"),
    ("self", "selves"),
    ("thief", "thieves"),
    ("calf", "calves"),
    ("potato", "potatoes"),
    ("tomato", "tomatoes"),
    ("hero", "heroes"),
    ("echo", "echoes"),
];

/// Words whose plural is the word itself (also matched as suffixes).
const UNCOUNTABLE_SUFFIXES: &[&str] = &[
    "data",
    "metadata",
    "endpoints",
    "equipment",
    "information",
    "news",
    "series",
    "species",
    "sheep",
    "deer",
    "fish",
    "moose",
    "rice",
    "money",
    "aircraft",
    "software",
    "hardware",
    "firmware",
    "feedback",
    "traffic",
];

/// The plural of `word` (already lower case).
pub(crate) fn pluralize(word: &str) -> String {
    if word.is_empty() {
        return String::new();
    }
    if UNCOUNTABLE_SUFFIXES
        .iter()
        .any(|suffix| word.ends_with(suffix))
    {
        return word.to_owned();
    }
    for (singular, plural) in IRREGULAR_SUFFIXES {
        if let Some(stem) = word.strip_suffix(singular) {
            return format!("{stem}{plural}");
        }
    }
    if let Some(stem) = word.strip_suffix("man") {
        // human, shaman, german are regular; chairman, fireman are not.
        if !matches!(word, "human" | "shaman" | "german" | "talisman" | "caiman")
            && !stem.is_empty()
        {
            return format!("{stem}men");
        }
        if word == "man" {
            return "men".into();
        }
    }
    if let Some(stem) = word.strip_suffix("sis") {
        return format!("{stem}ses");
    }
    if let Some(stem) = word.strip_suffix('y') {
        let before = stem.chars().last();
        if before.is_some_and(|c| !matches!(c, 'a' | 'e' | 'i' | 'o' | 'u')) {
            return format!("{stem}ies");
        }
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|suffix| word.ends_with(suffix))
    {
        return format!("{word}es");
    }
    format!("{word}s")
}

#[cfg(test)]
mod tests {
    use super::pluralize;

    #[test]
    fn regular_and_irregular() {
        let cases = [
            ("broker", "brokers"),
            ("channel", "channels"),
            ("service", "services"),
            ("policy", "policies"),
            ("gateway", "gateways"),
            ("ingress", "ingresses"),
            ("status", "statuses"),
            ("box", "boxes"),
            ("match", "matches"),
            ("mesh", "meshes"),
            ("person", "people"),
            ("salesperson", "salespeople"),
            ("child", "children"),
            ("analysis", "analyses"),
            ("index", "indices"),
            ("endpoints", "endpoints"),
            ("metadata", "metadata"),
            ("human", "humans"),
            ("fireman", "firemen"),
            ("leaf", "leaves"),
            ("proxy", "proxies"),
            ("key", "keys"),
            ("clusterchannelprovisioner", "clusterchannelprovisioners"),
        ];
        for (singular, plural) in cases {
            assert_eq!(pluralize(singular), plural, "{singular}");
        }
    }
}
