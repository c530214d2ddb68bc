use super::pluralize;

#[test]
fn table() {
    let table = [
        // regular
        ("broker", "brokers"),
        ("channel", "channels"),
        ("service", "services"),
        ("memcached", "memcacheds"),
        ("deployment", "deployments"),
        ("configmap", "configmaps"),
        // -s, -x, -z, -ch, -sh
        ("ingress", "ingresses"),
        ("status", "statuses"),
        ("bus", "buses"),
        ("box", "boxes"),
        ("quiz", "quizzes"),
        ("blitz", "blitzes"),
        ("batch", "batches"),
        ("mesh", "meshes"),
        ("endpoints", "endpoints"),
        // -y
        ("policy", "policies"),
        ("proxy", "proxies"),
        ("gateway", "gateways"),
        ("key", "keys"),
        ("toy", "toys"),
        ("guy", "guys"),
        ("soliloquy", "soliloquies"),
        // -f / -fe
        ("wolf", "wolves"),
        ("knife", "knives"),
        ("leaf", "leaves"),
        ("scarf", "scarves"),
        ("safe", "saves"),
        ("dwarf", "dwarfs"),
        ("thief", "thieves"),
        ("roof", "roofs"),
        ("hive", "hives"),
        ("directive", "directives"),
        // -is
        ("analysis", "analyses"),
        ("diagnosis", "diagnoses"),
        ("crisis", "crises"),
        ("axis", "axes"),
        ("basis", "bases"),
        // -o
        ("hero", "heroes"),
        ("potato", "potatoes"),
        ("photo", "photos"),
        ("video", "videoes"), // flect has no -eo rule
        ("radio", "radios"),
        ("zoo", "zoos"),
        // irregulars and compounds
        ("person", "people"),
        ("child", "children"),
        ("man", "men"),
        ("woman", "women"),
        ("human", "humans"),
        ("mouse", "mice"),
        ("goose", "geese"),
        ("tooth", "teeth"),
        ("foot", "feet"),
        ("ox", "oxen"),
        ("salesperson", "salespeople"),
        ("grandchild", "grandchildren"),
        ("index", "indices"),
        ("matrix", "matrices"),
        ("vertex", "vertices"),
        ("criterion", "criteria"),
        ("datum", "data"),
        ("medium", "media"),
        ("cactus", "cacti"),
        ("alias", "aliases"),
        ("house", "houses"),
        ("warehouse", "warehouses"),
        // uncountables and identicals
        ("equipment", "equipment"),
        ("information", "information"),
        ("news", "news"),
        ("sheep", "sheep"),
        ("series", "series"),
        ("species", "species"),
        ("fish", "fish"),
        ("chassis", "chassis"),
        // already plural
        ("people", "people"),
        ("children", "children"),
        ("data", "data"),
        // acronyms
        ("dns", "dnses"),
        ("api", "apis"),
        ("id", "ids"),
        ("url", "urls"),
        ("vpn", "vpns"),
        // Latin/Greek suffixes
        ("polyhedron", "polyhedra"),
        ("aquarium", "aquaria"),
        ("stadium", "stadiums"),
        ("museum", "museums"),
        ("nebula", "nebulae"),
        ("plateau", "plateaux"),
    ];
    for (singular, plural) in table {
        assert_eq!(pluralize(singular), plural, "pluralize({singular:?})");
    }
}

#[test]
fn empty() {
    assert_eq!(pluralize(""), "");
}
