//! flect's data (`github.com/gobuffalo/flect` v1.0.3, the version Kubebuilder v4 uses):
//! `plural_rules.go`'s dictionary of irregular words and suffix rules, `acronyms.go`'s
//! acronyms.

/// One dictionary entry (flect's `Word`).
pub(super) struct Word {
    pub(super) singular: &'static str,
    pub(super) plural: &'static str,
    pub(super) alternative: &'static str,
    pub(super) unidirectional: bool,
    pub(super) exact: bool,
}

/// A dictionary word (`singular`, `plural`); uncountables have `plural == singular`.
const fn w(singular: &'static str, plural: &'static str) -> Word {
    Word {
        singular,
        plural,
        alternative: "",
        unidirectional: false,
        exact: false,
    }
}

/// A dictionary word with an alternative plural.
const fn wa(singular: &'static str, plural: &'static str, alternative: &'static str) -> Word {
    Word {
        alternative,
        ..w(singular, plural)
    }
}

/// A dictionary word that only matches exactly (never as the suffix of a compound).
const fn wx(singular: &'static str, plural: &'static str) -> Word {
    Word {
        exact: true,
        ..w(singular, plural)
    }
}

/// A dictionary word whose plural must not map back to it.
const fn wu(singular: &'static str, plural: &'static str, alternative: &'static str) -> Word {
    Word {
        unidirectional: true,
        ..wa(singular, plural, alternative)
    }
}

/// flect's `Dictionary`, in its order (the order matters for suffix rules).
pub(super) const DICTIONARY: &[Word] = &[
    // identical singular and plural
    w("aircraft", "aircraft"),
    wa("beef", "beef", "beefs"),
    w("bison", "bison"),
    wu("blues", "blues", ""),
    w("chassis", "chassis"),
    w("deer", "deer"),
    wa("fish", "fish", "fishes"),
    w("moose", "moose"),
    w("police", "police"),
    wa("salmon", "salmon", "salmons"),
    w("series", "series"),
    w("sheep", "sheep"),
    wa("shrimp", "shrimp", "shrimps"),
    w("species", "species"),
    wa("swine", "swine", "swines"),
    wa("trout", "trout", "trouts"),
    wa("tuna", "tuna", "tunas"),
    w("you", "you"),
    // -en
    w("child", "children"),
    wx("ox", "oxen"),
    // apophonic
    w("foot", "feet"),
    w("goose", "geese"),
    w("man", "men"),
    w("human", "humans"),
    wx("louse", "lice"),
    w("mouse", "mice"),
    w("tooth", "teeth"),
    w("woman", "women"),
    // miscellaneous
    wx("die", "dice"),
    w("person", "people"),
    // French -u -> -x
    wa("adieu", "adieux", "adieus"),
    w("fabliau", "fabliaux"),
    wa("bureau", "bureaus", "bureaux"),
    // Greek -on -> -a
    w("criterion", "criteria"),
    wa("ganglion", "ganglia", "ganglions"),
    wa("lexicon", "lexica", "lexicons"),
    wa("mitochondrion", "mitochondria", "mitochondrions"),
    w("noumenon", "noumena"),
    w("phenomenon", "phenomena"),
    w("taxon", "taxa"),
    // Latin -um -> -a
    w("media", "media"),
    wu("medium", "media", "mediums"),
    wa("stadium", "stadiums", "stadia"),
    wa("aquarium", "aquaria", "aquariums"),
    wa("auditorium", "auditoria", "auditoriums"),
    wa("symposium", "symposia", "symposiums"),
    wa("curriculum", "curriculums", "curricula"),
    w("quota", "quotas"),
    // Latin -us -> -i / -era
    wa("alumnus", "alumni", "alumnuses"),
    w("bacillus", "bacilli"),
    wa("cactus", "cacti", "cactuses"),
    w("coccus", "cocci"),
    wa("focus", "foci", "focuses"),
    wa("locus", "loci", "locuses"),
    wa("nucleus", "nuclei", "nucleuses"),
    wa("octopus", "octupuses", "octopi"),
    wa("radius", "radii", "radiuses"),
    w("syllabus", "syllabi"),
    wa("corpus", "corpora", "corpuses"),
    w("genus", "genera"),
    // Latin -a -> -ae
    w("alumna", "alumnae"),
    w("vertebra", "vertebrae"),
    w("differentia", "differentiae"),
    w("minutia", "minutiae"),
    w("vita", "vitae"),
    w("larva", "larvae"),
    w("postcava", "postcavae"),
    w("praecava", "praecavae"),
    w("uva", "uvae"),
    // Latin -ex -> -ices
    wa("apex", "apices", "apexes"),
    wa("codex", "codices", "codexes"),
    wa("index", "indices", "indexes"),
    wa("latex", "latices", "latexes"),
    wa("vertex", "vertices", "vertexes"),
    wa("vortex", "vortices", "vortexes"),
    // Latin -ix -> -ices
    wa("appendix", "appendices", "appendixes"),
    wa("radix", "radices", "radixes"),
    wa("helix", "helices", "helixes"),
    // Latin -is -> -es
    wx("axis", "axes"),
    w("crisis", "crises"),
    wu("ellipsis", "ellipses", ""),
    w("genesis", "geneses"),
    w("oasis", "oases"),
    w("thesis", "theses"),
    w("testis", "testes"),
    w("base", "bases"),
    wu("basis", "bases", ""),
    wx("alias", "aliases"),
    w("vedalia", "vedalias"),
    // -ch, -o, -s, -sh, -x, -z conflicts
    wx("use", "uses"),
    w("abuse", "abuses"),
    w("cause", "causes"),
    w("clause", "clauses"),
    w("cruse", "cruses"),
    w("excuse", "excuses"),
    w("fuse", "fuses"),
    w("house", "houses"),
    w("misuse", "misuses"),
    w("muse", "muses"),
    w("pause", "pauses"),
    w("ache", "aches"),
    w("topaz", "topazes"),
    wa("buffalo", "buffaloes", "buffalos"),
    w("potato", "potatoes"),
    w("tomato", "tomatoes"),
    // uncountables
    w("equipment", "equipment"),
    w("information", "information"),
    w("jeans", "jeans"),
    w("money", "money"),
    w("news", "news"),
    w("rice", "rice"),
    // -f to -ves exceptions
    wa("dwarf", "dwarfs", "dwarves"),
    wa("hoof", "hoofs", "hooves"),
    w("thief", "thieves"),
    w("chive", "chives"),
    w("hive", "hives"),
    w("move", "moves"),
    // -y to -ies exceptions
    w("movie", "movies"),
    w("cookie", "cookies"),
    // -um to -a exceptions
    w("pretorium", "pretoriums"),
    w("agenda", "agendas"),
    wa("formula", "formulas", "formulae"),
    // -o to -oes exceptions
    w("shoe", "shoes"),
    wx("toe", "toes"),
    w("graffiti", "graffiti"),
    // abbreviations
    wx("ID", "IDs"),
];

/// flect's `singularToPluralSuffixList`; the order is the rule priority.
pub(super) const SUFFIXES: &[(&str, &str)] = &[
    // -f / -fe -> -ves
    ("tive", "tives"),
    ("eaf", "eaves"),
    ("oaf", "oaves"),
    ("afe", "aves"),
    ("arf", "arves"),
    ("rfe", "rves"),
    ("rf", "rves"),
    ("lf", "lves"),
    ("fe", "ves"),
    // consonant + y -> -ies
    ("ay", "ays"),
    ("ey", "eys"),
    ("oy", "oys"),
    ("quy", "quies"),
    ("uy", "uys"),
    ("y", "ies"),
    // French -eau -> -eaux
    ("eau", "eaux"),
    // Latin -a -> -ae (flect maps all of these to "bulae")
    ("bula", "bulae"),
    ("dula", "bulae"),
    ("lula", "bulae"),
    ("nula", "bulae"),
    ("vula", "bulae"),
    // Greek -on -> -a
    ("hedron", "hedra"),
    // Latin -um -> -a
    ("ium", "ia"),
    ("seum", "seums"),
    ("eum", "ea"),
    ("oum", "oa"),
    ("stracum", "straca"),
    ("dum", "da"),
    ("elum", "ela"),
    ("ilum", "ila"),
    ("olum", "ola"),
    ("ulum", "ula"),
    ("llum", "lla"),
    ("ylum", "yla"),
    ("imum", "ima"),
    ("ernum", "erna"),
    ("gnum", "gna"),
    ("brum", "bra"),
    ("crum", "cra"),
    ("terum", "tera"),
    ("serum", "sera"),
    ("trum", "tra"),
    ("antum", "anta"),
    ("atum", "ata"),
    ("entum", "enta"),
    ("etum", "eta"),
    ("itum", "ita"),
    ("otum", "ota"),
    ("utum", "uta"),
    ("ctum", "cta"),
    ("ovum", "ova"),
    // Latin -ix -> -ices
    ("trix", "trices"),
    // Latin -is -> -es
    ("iasis", "iases"),
    ("mesis", "meses"),
    ("kinesis", "kineses"),
    ("resis", "reses"),
    ("gnosis", "gnoses"),
    ("opsis", "opses"),
    ("ysis", "yses"),
    // -ch, -o, -s, -sh, -x, -z
    ("ouse", "ouses"),
    ("lause", "lauses"),
    ("us", "uses"),
    ("ch", "ches"),
    ("io", "ios"),
    ("sh", "shes"),
    ("ss", "sses"),
    ("ez", "ezzes"),
    ("iz", "izzes"),
    ("tz", "tzes"),
    ("zz", "zzes"),
    ("ano", "anos"),
    ("lo", "los"),
    ("to", "tos"),
    ("oo", "oos"),
    ("o", "oes"),
    ("x", "xes"),
    // abbreviations
    ("S", "Ses"),
];

/// flect's `baseAcronyms` that can match an upper-cased word.
pub(super) const ACRONYMS: &[&str] = &[
    "OK", "UTF8", "HTML", "JSON", "JWT", "ID", "UUID", "SQL", "ACK", "ACL", "ADSL", "AES", "ANSI",
    "API", "ARP", "ATM", "BGP", "BSS", "CCITT", "CHAP", "CIDR", "CIR", "CLI", "CPE", "CPU", "CRC",
    "CRT", "CSMA", "CMOS", "DCE", "DEC", "DES", "DHCP", "DNS", "DRAM", "DSL", "DSLAM", "DTE",
    "DMI", "EHA", "EIA", "EIGRP", "EOF", "ESS", "FCC", "FCS", "FDDI", "FTP", "GBIC", "GEPOF",
    "HDLC", "HTTP", "HTTPS", "IANA", "ICMP", "IDF", "IDS", "IEEE", "IETF", "IMAP", "IP", "IPS",
    "ISDN", "ISP", "LACP", "LAN", "LAPB", "LAPF", "LLC", "MAC", "MC", "MDF", "MIB", "MPLS", "MTU",
    "NAC", "NAT", "NBMA", "NIC", "NRZ", "NRZI", "NVRAM", "OIDC", "OSI", "OSPF", "OUI", "PAP",
    "PAT", "PC", "PIM", "PCM", "PDU", "POP3", "POTS", "PPP", "PPTP", "PTT", "PVST", "RAM", "RARP",
    "RFC", "RIP", "RLL", "ROM", "RSTP", "RTP", "RCP", "SDLC", "SFD", "SFP", "SLARP", "SLIP",
    "SMTP", "SNA", "SNAP", "SNMP", "SOF", "SRAM", "SSH", "SSID", "STP", "SYN", "TDM", "TFTP",
    "TIA", "TOFU", "UDP", "URL", "URI", "USB", "UTP", "VC", "VLAN", "VLSM", "VPN", "W3C", "WAN",
    "WEP", "WPA", "WWW",
];
