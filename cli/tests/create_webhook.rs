//! `kbr create webhook`, end to end through the binary.

mod common;

use std::fs;
use std::path::Path;

use common::*;

const NEXT: &str =
    "Next: implement your new webhook and generate the manifests with:\n$ make manifests\n";

/// `kbr create webhook --group g --version v --kind k` plus `extra`.
fn create_webhook(dir: &Path, [group, version, kind]: [&str; 3], extra: &[&str]) -> Output {
    let mut args = vec![
        "create",
        "webhook",
        "--group",
        group,
        "--version",
        version,
        "--kind",
        kind,
    ];
    args.extend_from_slice(extra);
    kbr(dir, &args)
}

fn read(dir: &Path, path: &str) -> String {
    fs::read_to_string(dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

const CHANNEL: [&str; 3] = ["eventing", "v1alpha1", "Channel"];

/// knative-lite with its three APIs.
fn knative() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = init_knative();
    for api in KNATIVE_APIS {
        assert_eq!(create_api(&dir, api, &[]).code, 0);
    }
    (tmp, dir)
}

#[test]
fn defaulting_and_validation_for_the_knative_channel() {
    let (_tmp, dir) = knative();
    let out = create_webhook(
        &dir,
        CHANNEL,
        &["--defaulting", "--programmatic-validation"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.ends_with(NEXT), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("\ncreated src/webhook/eventing/v1alpha1/channel.rs\n"),
        "{}",
        out.stdout
    );

    let webhook = read(&dir, "src/webhook/eventing/v1alpha1/channel.rs");
    assert!(webhook.starts_with("// Copyright 2026.\n"), "{webhook}");
    assert!(
        webhook.contains("type Object = api::v1alpha1::Channel;\n"),
        "{webhook}"
    );
    assert!(webhook.contains("impl Defaulter<Object> for ChannelCustomDefaulter {"));
    assert!(webhook.contains("impl Validator<Object> for ChannelCustomValidator {"));
    assert!(webhook.contains("        .with_defaulter(ChannelCustomDefaulter)\n        .with_validator(ChannelCustomValidator)\n        .complete(webhooks)\n"), "{webhook}");
    assert!(!webhook.contains("Convertible"), "{webhook}");
    assert!(
        read(&dir, "tests/webhook/channel.rs")
            .contains("let webhooks = knative_lite::webhooks(None)?;")
    );
    assert_eq!(
        read(&dir, "src/webhook/mod.rs")
            .matches("pub mod eventing;\n// +kbr:scaffold:groups\n")
            .count(),
        1
    );
    assert!(
        read(&dir, "src/webhook/eventing/mod.rs")
            .contains("pub mod v1alpha1;\n// +kbr:scaffold:versions\n")
    );
    assert!(
        read(&dir, "src/webhook/eventing/v1alpha1/mod.rs")
            .contains("pub mod channel;\n// +kbr:scaffold:kinds\n")
    );
    let lib = read(&dir, "src/lib.rs");
    assert!(lib.contains("    webhook::eventing::v1alpha1::channel::setup_webhook,\n    // +kbr:scaffold:webhook\n"), "{lib}");

    let project = read(&dir, "PROJECT");
    assert!(project.contains("  kind: Channel\n  path: knative_lite::api::eventing::v1alpha1\n  plural: channels\n  version: v1alpha1\n  webhooks:\n    defaulting: true\n    validation: true\n    webhookVersion: v1\n"), "{project}");

    for path in [
        "config/webhook/service.yaml",
        "config/webhook/kustomizeconfig.yaml",
        "config/certmanager/issuer.yaml",
        "config/certmanager/certificate-metrics.yaml",
        "config/certmanager/certificate-webhook.yaml",
        "config/certmanager/kustomization.yaml",
        "config/certmanager/kustomizeconfig.yaml",
        "config/default/manager_webhook_patch.yaml",
        "config/network-policy/allow-webhook-traffic.yaml",
    ] {
        assert!(
            read(&dir, path).starts_with("# Copyright 2026.\n"),
            "{path}"
        );
    }
    assert!(read(&dir, "config/webhook/kustomization.yaml").contains(
        "resources:\n- manifests.yaml\n# +kbr:scaffold:webhookmanifests\n- service.yaml\n"
    ));
    let default = read(&dir, "config/default/kustomization.yaml");
    for once in [
        "- ../webhook\n- ../certmanager\n# +kbr:scaffold:webhookresource\n",
        "- path: manager_webhook_patch.yaml\n  target:\n    kind: Deployment\n",
        // Webhooks need cert-manager, so it issues the metrics certificate too.
        "- path: cert_metrics_manager_patch.yaml\n  target:\n    kind: Deployment\n# +kbr:scaffold:webhookpatch\n",
        "\n- source:\n    kind: Service\n    version: v1\n    name: controller-manager-metrics-service\n    fieldPath: .metadata.name\n",
    ] {
        assert_eq!(default.matches(once).count(), 1, "{once:?} in {default}");
    }
    assert!(
        read(&dir, "config/certmanager/kustomization.yaml").contains(
            "- issuer.yaml\n- certificate-metrics.yaml\n# `kbr create webhook` adds the webhook server's certificate here.\n- certificate-webhook.yaml\n# +kbr:scaffold:certificates\n"
        )
    );
    assert!(
        read(&dir, "config/prometheus/kustomization.yaml").contains(
            "\npatches:\n- path: monitor_tls_patch.yaml\n  target:\n    kind: ServiceMonitor\n# +kbr:scaffold:monitortls\n"
        )
    );
    // CA injection: the namespace and the name of the certificate, for each configuration.
    for kind in [
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    ] {
        let select = format!("  - select:\n      kind: {kind}\n");
        assert_eq!(default.matches(&select).count(), 2, "{kind} in {default}");
    }
    assert_eq!(default.matches("\nreplacements:\n").count(), 1, "{default}");
    assert!(!default.contains("CustomResourceDefinition"), "{default}");
    assert!(!dir.join("config/crd/patches").exists());
}

#[test]
fn conversion_marks_hub_and_spokes_and_patches_the_crd() {
    let (_tmp, dir) = init_knative();
    let widget = |version| ["toys", version, "Widget"];
    assert_eq!(create_api(&dir, widget("v1"), &[]).code, 0);
    for version in ["v2", "v1beta1"] {
        assert_eq!(
            create_api(&dir, widget(version), &["--controller=false"]).code,
            0
        );
    }
    let out = create_webhook(
        &dir,
        widget("v2"),
        &["--conversion", "--spoke", "v1,v1beta1"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);

    let hub = read(&dir, "src/webhook/toys/v2/widget.rs");
    assert!(hub.contains("impl Hub for Object {}\n"), "{hub}");
    assert!(
        hub.contains("impl Convertible<Object> for api::v1::Widget {\n"),
        "{hub}"
    );
    assert!(
        hub.contains("impl Convertible<Object> for api::v1beta1::Widget {\n"),
        "{hub}"
    );
    assert!(hub.contains("    let conversion = Conversion::<Object>::new()\n        .spoke::<api::v1::Widget>()\n        .spoke::<api::v1beta1::Widget>();\n"), "{hub}");
    assert!(!hub.contains("WebhookBuilder"), "{hub}");
    assert!(
        read(&dir, "src/api/toys/v2/widget.rs")
            .contains("#[kbr(storage)]\npub struct WidgetSpec {")
    );
    for spoke in ["v1", "v1beta1"] {
        let api = read(&dir, &format!("src/api/toys/{spoke}/widget.rs"));
        assert!(
            api.contains("#[kbr(storage = false)]\npub struct WidgetSpec {"),
            "{api}"
        );
    }
    let patch = read(&dir, "config/crd/patches/webhook_in_widgets.yaml");
    assert!(
        patch.contains("  name: widgets.toys.knative.dev\n"),
        "{patch}"
    );
    assert!(patch.contains("          path: /convert\n"), "{patch}");
    let crd = read(&dir, "config/crd/kustomization.yaml");
    assert!(
        crd.contains(
            "- path: patches/webhook_in_widgets.yaml\n# +kbr:scaffold:crdkustomizewebhookpatch\n"
        ),
        "{crd}"
    );
    assert!(
        crd.contains(
            "configurations:\n- kustomizeconfig.yaml\n# +kbr:scaffold:crdkustomizeconfigurations\n"
        ),
        "{crd}"
    );
    assert!(dir.join("config/crd/kustomizeconfig.yaml").is_file());
    assert!(
        !read(&dir, "config/webhook/kustomization.yaml").contains("- manifests.yaml"),
        "conversion alone has no configurations"
    );
    let default = read(&dir, "config/default/kustomization.yaml");
    assert_eq!(
        default
            .matches("      name: widgets.toys.knative.dev\n")
            .count(),
        2,
        "{default}"
    );
    let project = read(&dir, "PROJECT");
    assert!(project.contains("  version: v2\n  webhooks:\n    conversion: true\n    spoke:\n    - v1\n    - v1beta1\n    webhookVersion: v1\n"), "{project}");

    // A second converted kind adds its CRD targets to the same replacements.
    let gadget = |version| ["toys", version, "Gadget"];
    assert_eq!(create_api(&dir, gadget("v1"), &[]).code, 0);
    assert_eq!(
        create_api(&dir, gadget("v2"), &["--controller=false"]).code,
        0
    );
    let out = create_webhook(
        &dir,
        gadget("v2"),
        &["--conversion", "--spoke=v1", "--defaulting"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let default = read(&dir, "config/default/kustomization.yaml");
    assert_eq!(
        default
            .matches("+kbr:scaffold:crdkustomizecainjectionns")
            .count(),
        1,
        "{default}"
    );
    assert_eq!(
        default
            .matches("      name: gadgets.toys.knative.dev\n")
            .count(),
        2,
        "{default}"
    );
    assert_eq!(default.matches("\nreplacements:\n").count(), 1, "{default}");
    assert!(read(&dir, "config/webhook/kustomization.yaml").contains("- manifests.yaml\n"));

    // One hub per kind.
    assert_fails(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "toys",
            "--version",
            "v1",
            "--kind",
            "Widget",
            "--conversion",
            "--spoke",
            "v1beta1",
        ],
        "failed to create webhook: Widget already converts through the hub v2; a kind has one hub, add the new version to its --spoke list instead",
    );
}

#[test]
fn bad_requests_write_nothing() {
    let (_tmp, dir) = knative();
    let cases: &[(&[&str], &str)] = &[
        (
            &[],
            "kbr create webhook requires at least one of --defaulting, --programmatic-validation and --conversion",
        ),
        (
            &["--defaulting=false"],
            "kbr create webhook requires at least one of --defaulting, --programmatic-validation and --conversion",
        ),
        (
            &["--conversion"],
            "--conversion needs --spoke <version>[,<version>...]: the versions converted to and from the hub v1alpha1",
        ),
        (
            &["--defaulting", "--spoke", "v1"],
            "--spoke names the versions of a conversion webhook; add --conversion",
        ),
        (
            &["--conversion", "--spoke", "v1"],
            "no API found for eventing.knative.dev/v1, Kind=Channel: run kbr create api --version v1 first",
        ),
        (
            &["--conversion", "--spoke", "v1alpha1"],
            "--spoke v1alpha1 is the hub (--version); list only the other versions",
        ),
        (&["--conversion", "--spoke", "V1"], "invalid version \"V1\""),
    ];
    for (extra, message) in cases {
        let mut args = vec![
            "create",
            "webhook",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Channel",
        ];
        args.extend_from_slice(extra);
        let before = snapshot(&dir);
        let out = kbr(&dir, &args);
        assert_eq!(out.code, 1, "{args:?}: {out:?}");
        assert!(
            out.stderr
                .starts_with(&format!("Error: failed to create webhook: {message}")),
            "{args:?}: {}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);
        assert_eq!(snapshot(&dir), before, "{args:?} changed the tree");
    }
    assert_fails(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "eventing",
            "--version",
            "v1",
            "--kind",
            "Channel",
            "--defaulting",
        ],
        "failed to create webhook: no API found for eventing.knative.dev/v1, Kind=Channel: run kbr create api --version v1 first",
    );
    assert_fails(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Trigger",
            "--defaulting",
        ],
        "failed to create webhook: no API found for eventing.knative.dev/v1alpha1, Kind=Trigger: run kbr create api --version v1alpha1 first",
    );
    let (_empty_tmp, empty) = empty_dir("empty");
    let out = kbr(
        &empty,
        &[
            "create",
            "webhook",
            "--group",
            "g",
            "--version",
            "v1",
            "--kind",
            "K",
            "--defaulting",
        ],
    );
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .starts_with("Error: failed to create webhook: no PROJECT file found in "),
        "{}",
        out.stderr
    );
}

#[test]
fn existing_webhooks_need_force() {
    let (_tmp, dir) = knative();
    assert_eq!(create_webhook(&dir, CHANNEL, &["--defaulting"]).code, 0);
    let webhook = dir.join("src/webhook/eventing/v1alpha1/channel.rs");
    let mine = fs::read_to_string(&webhook).unwrap_or_default() + "\n// Mine.\n";
    fs::write(&webhook, &mine).unwrap_or_else(|e| panic!("{e}"));
    assert_fails(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Channel",
            "--defaulting",
        ],
        "failed to create webhook: defaulting webhook already exists for this resource; pass --force",
    );
    // Adding another type rewrites the kind's file: an edited one only with --force, which
    // merges the new scaffold into the edits.
    assert_fails(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "eventing",
            "--version",
            "v1alpha1",
            "--kind",
            "Channel",
            "--programmatic-validation",
        ],
        "failed to create webhook: file src/webhook/eventing/v1alpha1/channel.rs already exists; you edited it: pass --force to merge the new scaffold into your edits",
    );
    let lib_before = read(&dir, "src/lib.rs");
    let default_before = read(&dir, "config/default/kustomization.yaml");
    let out = create_webhook(&dir, CHANNEL, &["--programmatic-validation", "--force"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rewritten = read(&dir, "src/webhook/eventing/v1alpha1/channel.rs");
    assert!(
        rewritten.ends_with("\n// Mine.\n"),
        "the user's edit is kept: {rewritten}"
    );
    assert!(
        rewritten.contains("ChannelCustomDefaulter")
            && rewritten.contains("ChannelCustomValidator"),
        "both kept: {rewritten}"
    );
    assert_eq!(
        read(&dir, "src/lib.rs"),
        lib_before,
        "registration is idempotent"
    );
    let default = read(&dir, "config/default/kustomization.yaml");
    assert!(
        default.len() > default_before.len(),
        "validating CA injection added"
    );
    assert_eq!(default.matches("- ../webhook\n").count(), 1);
    assert!(
        read(&dir, "PROJECT").contains("  webhooks:\n    defaulting: true\n    validation: true\n")
    );
}

#[test]
fn generated_webhooks_are_rustfmt_clean() {
    let (_tmp, dir) = knative();
    assert_eq!(
        create_webhook(
            &dir,
            CHANNEL,
            &["--defaulting", "--programmatic-validation"]
        )
        .code,
        0
    );
    assert_eq!(create_api(&dir, ["toys", "v1", "Widget"], &[]).code, 0);
    assert_eq!(
        create_api(&dir, ["toys", "v2", "Widget"], &["--controller=false"]).code,
        0
    );
    assert_eq!(
        create_webhook(
            &dir,
            ["toys", "v2", "Widget"],
            &["--conversion", "--spoke", "v1", "--programmatic-validation"]
        )
        .code,
        0
    );
    let (long_group, long_version) = ("networking-configuration.policies", "v2alpha1");
    for version in ["v1", long_version] {
        let extra: &[&str] = if version == "v1" {
            &[]
        } else {
            &["--controller=false"]
        };
        assert_eq!(
            create_api(&dir, [long_group, version, LONGEST_KIND], extra).code,
            0
        );
    }
    let out = create_webhook(
        &dir,
        [long_group, long_version, LONGEST_KIND],
        &[
            "--defaulting",
            "--programmatic-validation",
            "--conversion",
            "--spoke",
            "v1",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut files: Vec<String> = Vec::new();
    for path in snapshot(&dir).keys().filter(|p| p.ends_with(".rs")) {
        files.push(dir.join(path).display().to_string());
    }
    let status = std::process::Command::new("rustfmt")
        .args(["--edition", "2024", "--check"])
        .args(&files)
        .status()
        .unwrap_or_else(|e| panic!("rustfmt: {e}"));
    assert!(
        status.success(),
        "generated webhook code is not rustfmt-clean"
    );
}

#[test]
#[ignore = "slow: builds a generated project with webhooks against the workspace runtime"]
fn webhooks_build_lint_and_pass_their_tests() {
    let (_tmp, dir) = empty_dir("knative-lite");
    let runtime = workspace_runtime();
    kbr_ok(
        &dir,
        &[
            "init",
            "--domain",
            "knative.dev",
            "--runtime-path",
            &runtime,
        ],
    );
    for api in KNATIVE_APIS {
        assert_eq!(create_api(&dir, api, &[]).code, 0);
    }
    assert_eq!(
        create_webhook(
            &dir,
            CHANNEL,
            &["--defaulting", "--programmatic-validation"]
        )
        .code,
        0
    );
    let (group, hub) = ("networking-configuration.policies", "v2alpha1");
    assert_eq!(create_api(&dir, [group, "v1", LONGEST_KIND], &[]).code, 0);
    assert_eq!(
        create_api(&dir, [group, hub, LONGEST_KIND], &["--controller=false"]).code,
        0
    );
    let all = [
        "--defaulting",
        "--programmatic-validation",
        "--conversion",
        "--spoke",
        "v1",
    ];
    assert_eq!(
        create_webhook(&dir, [group, hub, LONGEST_KIND], &all).code,
        0
    );
    cargo_in(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    cargo_in(&dir, &["test"]);
    cargo_in(
        &dir,
        &["run", "--quiet", "--bin", "manifests", "--", "config"],
    );
    assert!(dir.join("config/webhook/manifests.yaml").is_file());
}

/// Issue 14.5: webhooks for built-in kinds, as Kubebuilder scaffolds them for core types: a Pod
/// defaulter (a kind without a controller) and a Deployment validator (next to its controller).
#[test]
fn webhooks_for_built_in_kinds() {
    let (_tmp, dir) = init_knative();
    let out = create_api(&dir, ["apps", "v1", "Deployment"], &["--resource=false"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = create_webhook(
        &dir,
        ["apps", "v1", "Deployment"],
        &["--programmatic-validation"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = create_webhook(&dir, ["core", "v1", "Pod"], &["--defaulting"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("created src/webhook/core/v1/pod.rs\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.ends_with(NEXT), "{}", out.stdout);

    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("- group: core\n  kind: Pod\n  path: kbr_runtime::k8s_openapi::api::core::v1\n  plural: pods\n  version: v1\n  webhooks:\n    defaulting: true\n    webhookVersion: v1\n"),
        "{project}"
    );
    assert!(
        project.contains("- controller: true\n  group: apps\n  kind: Deployment\n  path: kbr_runtime::k8s_openapi::api::apps::v1\n  plural: deployments\n  version: v1\n  webhooks:\n    validation: true\n    webhookVersion: v1\n"),
        "{project}"
    );
    let pod = read(&dir, "src/webhook/core/v1/pod.rs");
    for expected in [
        "use kbr_runtime::k8s_openapi::api::core as api;\n",
        "type Object = api::v1::Pod;\n",
        "impl Defaulter<Object> for PodCustomDefaulter {\n",
        "`/mutate--v1-pod`",
    ] {
        assert!(pod.contains(expected), "{expected}: {pod}");
    }
    let deployment = read(&dir, "src/webhook/apps/v1/deployment.rs");
    assert!(
        deployment.contains("impl Validator<Object> for DeploymentCustomValidator {\n"),
        "{deployment}"
    );
    let test = read(&dir, "tests/webhook/pod.rs");
    assert!(
        test.contains("let info = ResourceInfo::of::<Object>();\n"),
        "{test}"
    );
    assert!(!test.contains("TestEnv"), "{test}");
    let lib = read(&dir, "src/lib.rs");
    assert!(
        lib.contains("    webhook::apps::v1::deployment::setup_webhook,\n    webhook::core::v1::pod::setup_webhook,\n"),
        "{lib}"
    );

    // No CRD, so no conversion.
    assert_fails(
        &dir,
        &[
            "create",
            "webhook",
            "--group",
            "core",
            "--version",
            "v1",
            "--kind",
            "Pod",
            "--conversion",
            "--spoke",
            "v1beta1",
        ],
        "failed to create webhook: v1, Kind=Pod is a built-in kind: Kubernetes serves its versions itself, so it has no conversion webhook; drop --conversion",
    );

    // A controller for the Pod later keeps its webhooks in PROJECT.
    let out = create_api(&dir, ["core", "v1", "Pod"], &["--resource=false"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let project = read(&dir, "PROJECT");
    assert!(
        project.contains("- controller: true\n  group: core\n  kind: Pod\n  path: kbr_runtime::k8s_openapi::api::core::v1\n  plural: pods\n  version: v1\n  webhooks:\n    defaulting: true\n"),
        "{project}"
    );

    // Replayed as it was: no `create api` for the Pod, which has no controller (replay runs
    // its `create webhook` after every `create api`; see `replay::commands`).
    let before = snapshot(&dir);
    kbr_ok(&dir, &["alpha", "generate", "--no-manifests"]);
    assert_eq!(snapshot(&dir), before);

    let files: Vec<String> = before
        .keys()
        .filter(|p| p.ends_with(".rs"))
        .map(|p| dir.join(p).display().to_string())
        .collect();
    let status = std::process::Command::new("rustfmt")
        .args(["--edition", "2024", "--check"])
        .args(&files)
        .status()
        .unwrap_or_else(|e| panic!("rustfmt: {e}"));
    assert!(status.success(), "generated code is not rustfmt-clean");
}

/// Issue 14.5: a generated project with a Pod defaulting webhook builds, lints clean, and its
/// scaffolded test passes.
#[test]
#[ignore = "slow: builds a generated project with webhooks against the workspace runtime"]
fn pod_defaulting_webhook_builds_and_passes_its_test() {
    let (_tmp, dir) = empty_dir("pod-operator");
    let runtime = workspace_runtime();
    kbr_ok(
        &dir,
        &[
            "init",
            "--domain",
            "example.com",
            "--runtime-path",
            &runtime,
        ],
    );
    let out = create_webhook(&dir, ["core", "v1", "Pod"], &["--defaulting"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    cargo_in(&dir, &["clippy", "--all-targets", "--", "-D", "warnings"]);
    cargo_in(&dir, &["test"]);
}
