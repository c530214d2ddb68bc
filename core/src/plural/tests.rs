//! flect's own test table (`github.com/gobuffalo/flect` v1.0.3, `flect_test.go`'s
//! `singlePluralAssertions`), every row: where flect's `Test_Pluralize` checks a row
//! (`doPluralizeTest`), `Pluralize(singular) == plural` and `Pluralize(plural) == plural`.
//! Then its dictionary (which flect's `init` adds to the table), and what Kubebuilder makes of
//! kinds.

use super::{DICTIONARY, pluralize, resource_plural};

/// `(singular, plural, doPluralizeTest)`, in flect's order.
const FLECT_TABLE: &[(&str, &str, bool)] = &[
    ("", "", true),
    ("Car", "Cars", true),
    ("Boy", "Boys", true),
    ("GoodBoy", "GoodBoys", true),
    ("Axis", "Axes", true),
    ("Child", "Children", true),
    ("GoodChild", "GoodChildren", true),
    ("node_child", "node_children", true),
    ("SmartPerson", "SmartPeople", true),
    ("great_person", "great_people", true),
    ("salesperson", "salespeople", true),
    ("custom_field", "custom_fields", true),
    ("funky jeans", "funky jeans", true),
    ("payment_information", "payment_information", true),
    ("sportsEquipment", "sportsEquipment", true),
    ("status_code", "status_codes", true),
    ("user_custom_field", "user_custom_fields", true),
    ("SuperbOx", "SuperbOxen", true),
    ("WildOx", "WildOxen", true),
    ("wild_ox", "wild_oxen", true),
    ("box", "boxes", true),
    ("fox", "foxes", true),
    ("comment", "comments", true),
    ("edge", "edges", true),
    ("equipment", "equipment", true),
    ("experience", "experiences", true),
    ("fleet", "fleets", true),
    ("foobar", "foobars", true),
    ("mouse", "mice", true),
    ("newsletter", "newsletters", true),
    ("stack", "stacks", true),
    ("user", "users", true),
    ("woman", "women", true),
    ("human", "humans", true),
    ("spokesman", "spokesmen", true),
    // -f / -fe -> -ves
    ("calf", "calves", true),
    ("dwarf", "dwarves", false),
    ("dwarf", "dwarfs", true),
    ("elf", "elves", true),
    ("half", "halves", true),
    ("knife", "knives", true),
    ("leaf", "leaves", true),
    ("life", "lives", true),
    ("loaf", "loaves", true),
    ("safe", "saves", true),
    ("scarf", "scarves", true),
    ("self", "selves", true),
    ("sheaf", "sheaves", true),
    ("shelf", "shelves", true),
    ("thief", "thieves", true),
    ("wharf", "wharves", true),
    ("wife", "wives", true),
    ("wolf", "wolves", true),
    ("beef", "beef", true),
    ("belief", "beliefs", true),
    ("chef", "chefs", true),
    ("chief", "chiefs", true),
    ("hoof", "hoofs", true),
    ("kerchief", "kerchiefs", true),
    ("roof", "roofs", true),
    ("archive", "archives", true),
    ("perspective", "perspectives", true),
    // consonant + y -> -ies
    ("day", "days", true),
    ("hobby", "hobbies", true),
    ("agency", "agencies", true),
    ("body", "bodies", true),
    ("abbey", "abbeys", true),
    ("jiffy", "jiffies", true),
    ("geology", "geologies", true),
    ("geography", "geographies", true),
    ("cookie", "cookies", true),
    ("sky", "skies", true),
    ("supply", "supplies", true),
    ("academy", "academies", true),
    ("ebony", "ebonies", true),
    ("boy", "boys", true),
    ("copy", "copies", true),
    ("category", "categories", true),
    ("embassy", "embassies", true),
    ("entity", "entities", true),
    ("guy", "guys", true),
    ("obsequy", "obsequies", true),
    ("navy", "navies", true),
    ("proxy", "proxies", true),
    ("crazy", "crazies", true),
    // French -u -> -x
    ("aboideau", "aboideaux", true),
    ("beau", "beaux", true),
    ("château", "châteaux", true),
    ("chateau", "chateaux", true),
    ("fabliau", "fabliaux", true),
    ("tableau", "tableaux", true),
    ("bureau", "bureaus", true),
    ("adieu", "adieux", true),
    // Greek -on -> -a
    ("tetrahedron", "tetrahedra", true),
    // Latin -um -> -a
    ("stadium", "stadiums", true),
    ("stadium", "stadia", false),
    ("aquarium", "aquaria", true),
    ("auditorium", "auditoria", true),
    ("bacterium", "bacteria", true),
    ("pretorium", "pretoriums", true),
    ("symposium", "symposia", true),
    ("symposium", "symposiums", false),
    ("amoebaeum", "amoebaea", true),
    ("coliseum", "coliseums", true),
    ("museum", "museums", true),
    ("agenda", "agendas", true),
    ("curriculum", "curriculums", true),
    ("collum", "colla", true),
    ("datum", "data", true),
    ("erratum", "errata", true),
    ("maximum", "maxima", true),
    ("platinum", "platinums", true),
    ("serum", "sera", true),
    ("spectrum", "spectra", true),
    // Latin -us -> -i / -era
    ("opera", "operas", true),
    // Latin -a -> -ae
    ("alumna", "alumnae", true),
    ("larva", "larvae", true),
    ("minutia", "minutiae", true),
    ("nebula", "nebulae", true),
    ("vertebra", "vertebrae", true),
    ("vita", "vitae", true),
    ("antenna", "antennas", true),
    ("formula", "formulas", true),
    ("tuna", "tuna", true),
    ("quota", "quotas", true),
    ("vedalia", "vedalias", true),
    ("media", "media", true),
    ("multimedia", "multimedia", true),
    // -ch, -o, -s, -sh, -x, -z
    ("lunch", "lunches", true),
    ("search", "searches", true),
    ("switch", "switches", true),
    ("headache", "headaches", true),
    ("marsh", "marshes", true),
    ("wish", "wishes", true),
    ("bus", "buses", true),
    ("campus", "campuses", true),
    ("caucus", "caucuses", true),
    ("circus", "circuses", true),
    ("plus", "pluses", true),
    ("prometheus", "prometheuses", true),
    ("status", "statuses", true),
    ("virus", "viruses", true),
    ("use", "uses", true),
    ("fuse", "fuses", true),
    ("house", "houses", true),
    ("spouse", "spouses", true),
    ("quiz", "quizzes", true),
    ("buzz", "buzzes", true),
    ("blitz", "blitzes", true),
    ("quartz", "quartzes", true),
    ("topaz", "topazes", true),
    ("waltz", "waltzes", true),
    ("prize", "prizes", true),
    ("access", "accesses", true),
    ("process", "processes", true),
    ("address", "addresses", true),
    ("case", "cases", true),
    ("database", "databases", true),
    ("glimpse", "glimpses", true),
    ("horse", "horses", true),
    ("lapse", "lapses", true),
    ("collapse", "collapses", true),
    ("truss", "trusses", true),
    ("portfolio", "portfolios", true),
    ("piano", "pianos", true),
    ("hello", "hellos", true),
    ("buffalo", "buffaloes", true),
    ("photo", "photos", true),
    ("potato", "potatoes", true),
    ("tomato", "tomatoes", true),
    ("graffiti", "graffiti", true),
    ("foo", "foos", true),
    ("zoo", "zoos", true),
    // Latin -ex / -ix -> -ices
    ("appendix", "appendices", true),
    ("codex", "codices", true),
    ("index", "indices", true),
    ("bodice", "bodices", true),
    ("helix", "helices", true),
    ("complex", "complexes", true),
    ("duplex", "duplexes", true),
    ("accomplice", "accomplices", true),
    ("slice", "slices", true),
    ("matrix", "matrices", true),
    ("justice", "justices", true),
    ("lattice", "lattices", true),
    ("notice", "notices", true),
    ("apex", "apices", true),
    ("spice", "spices", true),
    ("device", "devices", true),
    ("service", "services", true),
    ("fix", "fixes", true),
    ("sex", "sexes", true),
    ("invoice", "invoices", true),
    ("voice", "voices", true),
    ("choice", "choices", true),
    // Latin -is -> -es
    ("axis", "axes", true),
    ("tax", "taxes", true),
    ("eclipse", "eclipses", true),
    ("ellipse", "ellipses", true),
    ("ellipsis", "ellipses", true),
    ("oasis", "oases", true),
    ("thesis", "theses", true),
    ("hypothesis", "hypotheses", true),
    ("parenthesis", "parentheses", true),
    ("analysis", "analyses", true),
    ("antithesis", "antitheses", true),
    ("diagnosis", "diagnoses", true),
    ("prognosis", "prognoses", true),
    ("synopsis", "synopses", true),
    ("synapse", "synapses", true),
    ("waste", "wastes", true),
    ("psi", "psis", true),
    ("pepsi", "pepsis", true),
];

#[test]
fn flects_table_row_by_row() {
    let mut failures = Vec::new();
    for &(singular, plural, checked) in FLECT_TABLE {
        if !checked {
            continue;
        }
        for input in [singular, plural] {
            let got = pluralize(input);
            if got != plural {
                failures.push(format!("pluralize({input:?}) = {got:?}, flect: {plural:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn flects_dictionary_words_take_their_plural() {
    for word in DICTIONARY {
        assert_eq!(pluralize(word.singular), word.plural, "{}", word.singular);
    }
}

#[test]
fn acronyms_and_compounds() {
    for (word, plural) in [
        ("dns", "dnses"),
        ("api", "apis"),
        ("URL", "URLs"),
        ("my_api", "my_apis"),
        ("MyURLProxy", "MyURLProxies"),
        ("ClusterPerson", "ClusterPeople"),
        ("  ", ""),
    ] {
        assert_eq!(pluralize(word), plural, "{word}");
    }
}

#[test]
fn resource_plurals_as_kubebuilder_computes_them() {
    for (kind, plural) in [
        ("Broker", "brokers"),
        ("Memcached", "memcacheds"),
        ("Policy", "policies"),
        ("Gateway", "gateways"),
        ("Ingress", "ingresses"),
        ("Endpoints", "endpoints"),
        ("ClusterChannelProvisioner", "clusterchannelprovisioners"),
        ("HTTPRoute", "httproutes"),
        ("Ox", "oxen"),
        ("Index", "indices"),
        ("Person", "people"),
        ("Video", "videoes"),
        ("DNS", "dnses"),
    ] {
        assert_eq!(resource_plural(kind), plural, "{kind}");
    }
}
