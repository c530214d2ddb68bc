//! The function signatures of the Kubernetes CEL environment, by overload id: the environment
//! apiextensions-apiserver compiles CRD rules in (apiserver `pkg/cel/environment/base.go`):
//! cel-go's standard library (`common/stdlib/standard.go`, ids from
//! `common/overloads/overloads.go`), optional types (`cel/library.go`, version 2), the extensions
//! `ext.Strings(2)`, `ext.Sets()`, `ext.Lists(3)`, `ext.TwoVarComprehensions()`
//! (`ext/strings.go`, `ext/sets.go`, `ext/lists.go`, `ext/comprehensions.go`), and the
//! Kubernetes libraries of apiserver `pkg/cel/library` (`lists.go`, `regex.go`, `urls.go`,
//! `quantity.go`, `ip.go`, `cidr.go`, `format.go`, `semverlib.go`).

/// Signatures, one per line: `function overload_id (params) -> result` for a global call,
/// `function overload_id receiver.(params) -> result` for a member call. `A`, `B` are type
/// parameters.
pub(super) const SIGNATURES: &str = "
_?_:_ conditional (bool, A, A) -> A
_&&_ logical_and (bool, bool) -> bool
_||_ logical_or (bool, bool) -> bool
!_ logical_not (bool) -> bool
@not_strictly_false not_strictly_false (bool) -> bool
_==_ equals (A, A) -> bool
_!=_ not_equals (A, A) -> bool
_+_ add_bytes (bytes, bytes) -> bytes
_+_ add_double (double, double) -> double
_+_ add_duration_duration (duration, duration) -> duration
_+_ add_duration_timestamp (duration, timestamp) -> timestamp
_+_ add_timestamp_duration (timestamp, duration) -> timestamp
_+_ add_int64 (int, int) -> int
_+_ add_list (list(A), list(A)) -> list(A)
_+_ add_string (string, string) -> string
_+_ add_uint64 (uint, uint) -> uint
_/_ divide_double (double, double) -> double
_/_ divide_int64 (int, int) -> int
_/_ divide_uint64 (uint, uint) -> uint
_%_ modulo_int64 (int, int) -> int
_%_ modulo_uint64 (uint, uint) -> uint
_*_ multiply_double (double, double) -> double
_*_ multiply_int64 (int, int) -> int
_*_ multiply_uint64 (uint, uint) -> uint
-_ negate_double (double) -> double
-_ negate_int64 (int) -> int
_-_ subtract_double (double, double) -> double
_-_ subtract_duration_duration (duration, duration) -> duration
_-_ subtract_int64 (int, int) -> int
_-_ subtract_timestamp_duration (timestamp, duration) -> timestamp
_-_ subtract_timestamp_timestamp (timestamp, timestamp) -> duration
_-_ subtract_uint64 (uint, uint) -> uint
_[_] index_list (list(A), int) -> A
_[_] index_map (map(A, B), A) -> B
_[_] optional_list_index_int (optional(list(A)), int) -> optional(A)
_[_] optional_map_index_value (optional(map(A, B)), A) -> optional(B)
_[?_] list_optindex_optional_int (list(A), int) -> optional(A)
_[?_] optional_list_optindex_optional_int (optional(list(A)), int) -> optional(A)
_[?_] map_optindex_optional_value (map(A, B), A) -> optional(B)
_[?_] optional_map_optindex_optional_value (optional(map(A, B)), A) -> optional(B)
@in in_list (A, list(A)) -> bool
@in in_map (A, map(A, B)) -> bool
size size_bytes (bytes) -> int
size bytes_size bytes.() -> int
size size_list (list(A)) -> int
size list_size list(A).() -> int
size size_map (map(A, B)) -> int
size map_size map(A, B).() -> int
size size_string (string) -> int
size string_size string.() -> int
type type (A) -> type(A)
bool bool_to_bool (bool) -> bool
bool string_to_bool (string) -> bool
bytes bytes_to_bytes (bytes) -> bytes
bytes string_to_bytes (string) -> bytes
double double_to_double (double) -> double
double int64_to_double (int) -> double
double string_to_double (string) -> double
double uint64_to_double (uint) -> double
duration duration_to_duration (duration) -> duration
duration int64_to_duration (int) -> duration
duration string_to_duration (string) -> duration
dyn to_dyn (A) -> dyn
int int64_to_int64 (int) -> int
int double_to_int64 (double) -> int
int duration_to_int64 (duration) -> int
int string_to_int64 (string) -> int
int timestamp_to_int64 (timestamp) -> int
int uint64_to_int64 (uint) -> int
string string_to_string (string) -> string
string bool_to_string (bool) -> string
string bytes_to_string (bytes) -> string
string double_to_string (double) -> string
string duration_to_string (duration) -> string
string int64_to_string (int) -> string
string timestamp_to_string (timestamp) -> string
string uint64_to_string (uint) -> string
string ip_to_string (net.IP) -> string
string cidr_to_string (net.CIDR) -> string
timestamp timestamp_to_timestamp (timestamp) -> timestamp
timestamp int64_to_timestamp (int) -> timestamp
timestamp string_to_timestamp (string) -> timestamp
uint uint64_to_uint64 (uint) -> uint
uint double_to_uint64 (double) -> uint
uint int64_to_uint64 (int) -> uint
uint string_to_uint64 (string) -> uint
contains contains_string string.(string) -> bool
endsWith ends_with_string string.(string) -> bool
startsWith starts_with_string string.(string) -> bool
matches matches (string, string) -> bool
matches matches_string string.(string) -> bool
getFullYear timestamp_to_year timestamp.() -> int
getFullYear timestamp_to_year_with_tz timestamp.(string) -> int
getMonth timestamp_to_month timestamp.() -> int
getMonth timestamp_to_month_with_tz timestamp.(string) -> int
getDayOfYear timestamp_to_day_of_year timestamp.() -> int
getDayOfYear timestamp_to_day_of_year_with_tz timestamp.(string) -> int
getDayOfMonth timestamp_to_day_of_month timestamp.() -> int
getDayOfMonth timestamp_to_day_of_month_with_tz timestamp.(string) -> int
getDate timestamp_to_day_of_month_1_based timestamp.() -> int
getDate timestamp_to_day_of_month_1_based_with_tz timestamp.(string) -> int
getDayOfWeek timestamp_to_day_of_week timestamp.() -> int
getDayOfWeek timestamp_to_day_of_week_with_tz timestamp.(string) -> int
getHours timestamp_to_hours timestamp.() -> int
getHours timestamp_to_hours_with_tz timestamp.(string) -> int
getHours duration_to_hours duration.() -> int
getMinutes timestamp_to_minutes timestamp.() -> int
getMinutes timestamp_to_minutes_with_tz timestamp.(string) -> int
getMinutes duration_to_minutes duration.() -> int
getSeconds timestamp_to_seconds timestamp.() -> int
getSeconds timestamp_to_seconds_tz timestamp.(string) -> int
getSeconds duration_to_seconds duration.() -> int
getMilliseconds timestamp_to_milliseconds timestamp.() -> int
getMilliseconds timestamp_to_milliseconds_with_tz timestamp.(string) -> int
getMilliseconds duration_to_milliseconds duration.() -> int
optional.of optional_of (A) -> optional(A)
optional.ofNonZeroValue optional_ofNonZeroValue (A) -> optional(A)
optional.none optional_none () -> optional(dyn)
value optional_value optional(A).() -> A
hasValue optional_hasValue optional(A).() -> bool
or optional_or_optional optional(A).(optional(A)) -> optional(A)
orValue optional_orValue_value optional(A).(A) -> A
_?._ select_optional_field (dyn, string) -> optional(dyn)
first list_first list(A).() -> optional(A)
last list_last list(A).() -> optional(A)
optional.unwrap optional_unwrap (list(optional(A))) -> list(A)
unwrapOpt optional_unwrapOpt list(optional(A)).() -> list(A)
charAt string_char_at_int string.(int) -> string
indexOf string_index_of_string string.(string) -> int
indexOf string_index_of_string_int string.(string, int) -> int
lastIndexOf string_last_index_of_string string.(string) -> int
lastIndexOf string_last_index_of_string_int string.(string, int) -> int
lowerAscii string_lower_ascii string.() -> string
upperAscii string_upper_ascii string.() -> string
replace string_replace_string_string string.(string, string) -> string
replace string_replace_string_string_int string.(string, string, int) -> string
split string_split_string string.(string) -> list(string)
split string_split_string_int string.(string, int) -> list(string)
substring string_substring_int string.(int) -> string
substring string_substring_int_int string.(int, int) -> string
trim string_trim string.() -> string
format string_format string.(list(dyn)) -> string
strings.quote strings_quote (string) -> string
join list_join list(string).() -> string
join list_join_string list(string).(string) -> string
sets.contains list_sets_contains_list (list(A), list(A)) -> bool
sets.equivalent list_sets_equivalent_list (list(A), list(A)) -> bool
sets.intersects list_sets_intersects_list (list(A), list(A)) -> bool
slice list_slice list(A).(int, int) -> list(A)
flatten list_flatten list(list(A)).() -> list(A)
flatten list_flatten_int list(dyn).(int) -> list(dyn)
lists.range lists_range (int) -> list(int)
reverse list_reverse list(A).() -> list(A)
distinct list_distinct list(A).() -> list(A)
cel.@mapInsert @mapInsert_map_key_value (map(A, B), A, B) -> map(A, B)
cel.@mapInsert @mapInsert_map_map (map(A, B), map(A, B)) -> map(A, B)
isSorted list_a_is_sorted_bool list(A).() -> bool
sum list_a_sum_a list(A).() -> A
max list_a_max_a list(A).() -> A
min list_a_min_a list(A).() -> A
indexOf list_a_index_of_int list(A).(A) -> int
lastIndexOf list_a_last_index_of_int list(A).(A) -> int
find string_find_string string.(string) -> string
findAll string_find_all_string string.(string) -> list(string)
findAll string_find_all_string_int string.(string, int) -> list(string)
url string_to_url (string) -> kubernetes.URL
isURL is_url_string (string) -> bool
getScheme url_get_scheme kubernetes.URL.() -> string
getHost url_get_host kubernetes.URL.() -> string
getHostname url_get_hostname kubernetes.URL.() -> string
getPort url_get_port kubernetes.URL.() -> string
getEscapedPath url_get_escaped_path kubernetes.URL.() -> string
getQuery url_get_query kubernetes.URL.() -> map(string, list(string))
quantity string_to_quantity (string) -> kubernetes.Quantity
isQuantity is_quantity_string (string) -> bool
sign quantity_sign (kubernetes.Quantity) -> int
isGreaterThan quantity_is_greater_than kubernetes.Quantity.(kubernetes.Quantity) -> bool
isLessThan quantity_is_less_than kubernetes.Quantity.(kubernetes.Quantity) -> bool
compareTo quantity_compare_to kubernetes.Quantity.(kubernetes.Quantity) -> int
asApproximateFloat quantity_get_float kubernetes.Quantity.() -> double
asInteger quantity_get_int kubernetes.Quantity.() -> int
isInteger quantity_is_integer kubernetes.Quantity.() -> bool
add quantity_add kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity
add quantity_add_int kubernetes.Quantity.(int) -> kubernetes.Quantity
sub quantity_sub kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity
sub quantity_sub_int kubernetes.Quantity.(int) -> kubernetes.Quantity
ip string_to_ip (string) -> net.IP
family ip_family net.IP.() -> int
ip.isCanonical ip_is_canonical (string) -> bool
isUnspecified ip_is_unspecified net.IP.() -> bool
isLoopback ip_is_loopback net.IP.() -> bool
isLinkLocalMulticast ip_is_link_local_multicast net.IP.() -> bool
isLinkLocalUnicast ip_is_link_local_unicast net.IP.() -> bool
isGlobalUnicast ip_is_global_unicast net.IP.() -> bool
isIP is_ip (string) -> bool
cidr string_to_cidr (string) -> net.CIDR
containsIP cidr_contains_ip_string net.CIDR.(string) -> bool
containsIP cidr_contains_ip_ip net.CIDR.(net.IP) -> bool
containsCIDR cidr_contains_cidr_string net.CIDR.(string) -> bool
containsCIDR cidr_contains_cidr net.CIDR.(net.CIDR) -> bool
ip cidr_ip net.CIDR.() -> net.IP
prefixLength cidr_prefix_length net.CIDR.() -> int
masked cidr_masked net.CIDR.() -> net.CIDR
isCIDR is_cidr (string) -> bool
validate format-validate kubernetes.NamedFormat.(string) -> optional(list(string))
format.named format-named (string) -> optional(kubernetes.NamedFormat)
semver string_to_semver (string) -> kubernetes.Semver
semver string_bool_to_semver (string, bool) -> kubernetes.Semver
isSemver is_semver_string (string) -> bool
isSemver is_semver_string_bool (string, bool) -> bool
isGreaterThan semver_is_greater_than kubernetes.Semver.(kubernetes.Semver) -> bool
isLessThan semver_is_less_than kubernetes.Semver.(kubernetes.Semver) -> bool
compareTo semver_compare_to kubernetes.Semver.(kubernetes.Semver) -> int
major semver_major kubernetes.Semver.() -> int
minor semver_minor kubernetes.Semver.() -> int
patch semver_patch kubernetes.Semver.() -> int
";

/// The comparison operators and the overload-id prefix of each.
pub(super) const COMPARISONS: &[(&str, &str)] = &[
    ("_<_", "less"),
    ("_<=_", "less_equals"),
    ("_>_", "greater"),
    ("_>=_", "greater_equals"),
];

/// The operand types every comparison is declared for, by id suffix.
pub(super) const COMPARED: &[(&str, &str, &str)] = &[
    ("bool", "bool", "bool"),
    ("int64", "int", "int"),
    ("int64_double", "int", "double"),
    ("int64_uint64", "int", "uint"),
    ("uint64", "uint", "uint"),
    ("uint64_double", "uint", "double"),
    ("uint64_int64", "uint", "int"),
    ("double", "double", "double"),
    ("double_int64", "double", "int"),
    ("double_uint64", "double", "uint"),
    ("string", "string", "string"),
    ("bytes", "bytes", "bytes"),
    ("timestamp", "timestamp", "timestamp"),
    ("duration", "duration", "duration"),
];

/// The element types `sort` and `sortBy` accept (`ext/lists.go`, `comparableTypes`).
pub(super) const SORTABLE: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "duration",
    "timestamp",
    "string",
    "bytes",
];

/// The named formats of `library/format.go`, `format.<name>()`.
pub(super) const FORMATS: &[&str] = &[
    "format.dns1123Label",
    "format.dns1123Subdomain",
    "format.dns1035Label",
    "format.qualifiedName",
    "format.dns1123LabelPrefix",
    "format.dns1123SubdomainPrefix",
    "format.dns1035LabelPrefix",
    "format.labelValue",
    "format.uri",
    "format.uuid",
    "format.byte",
    "format.date",
    "format.datetime",
];
