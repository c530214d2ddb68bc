{% if r.paths.use_custom_resource %}
use kbr_runtime::CustomResource;
{%- endif %}
use kbr_runtime::k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;
{%- if r.paths.use_json_schema %}
use schemars::JsonSchema;
{%- endif %}
{%- if r.paths.use_serialize && r.paths.use_deserialize %}
use serde::{Deserialize, Serialize};
{%- else if r.paths.use_serialize %}
use serde::Serialize;
{%- else if r.paths.use_deserialize %}
use serde::Deserialize;
{%- endif %}
