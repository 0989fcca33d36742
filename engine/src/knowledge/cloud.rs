//! Cloud and infrastructure CLIs: aws, gcloud, az, kubectl, helm, terraform and friends.
//!
//! Reads (`describe`, `list`, `get`, `plan`) are learnable at a high tier; anything that
//! changes remote state is external and hard to undo; naming production raises the reach.

use super::classification::{Classification, Invocation, Judge};
use crate::model::{Capability as C, Exposure, Reach, Reversibility, Scale};
use crate::static_index::{flags, name_set};

pub(super) const TABLE: &[(&[&str], Judge)] = &[
    (
        &[
            "aws",
            "gcloud",
            "gsutil",
            "bq",
            "az",
            "doctl",
            "linode-cli",
            "hcloud",
            "oci",
            "ibmcloud",
            "flyctl",
            "fly",
            "heroku",
            "vercel",
            "netlify",
            "firebase",
            "wrangler",
            "railway",
            "render",
            "supabase",
            "eksctl",
            "s3cmd",
            "rclone",
            "gh-cloud",
        ],
        cloud_cli,
    ),
    (
        &[
            "kubectl",
            "oc",
            "k9s",
            "kubectx",
            "kubens",
            "minikube-kubectl",
        ],
        kubectl,
    ),
    (
        &[
            "helm",
            "helmfile",
            "kustomize",
            "skaffold",
            "tilt",
            "argocd",
            "flux",
        ],
        helm,
    ),
    (
        &[
            "terraform",
            "tofu",
            "terragrunt",
            "pulumi",
            "cdk",
            "cdktf",
            "serverless",
            "sls",
            "sam",
            "ansible",
            "ansible-playbook",
            "packer",
            "vagrant",
            "nomad",
            "consul",
            "vault",
        ],
        iac,
    ),
];

name_set! {
    static READ_VERBS = &[
        "describe",
        "list",
        "get",
        "show",
        "ls",
        "cat",
        "head",
        "status",
        "info",
        "version",
        "whoami",
        "logs",
        "log",
        "tail",
        "inspect",
        "lookup",
        "query",
        "search",
        "validate",
        "plan",
        "diff",
        "explain",
        "api-resources",
        "api-versions",
        "cluster-info",
        "top",
        "view",
        "history",
        "output",
        "providers",
        "graph",
        "fmt",
        "preview",
        "config-list",
        "account",
        "help",
        "--version",
        "--help",
        "wait",
        "events",
        "auth-list",
    ];
}

fn production_named(inv: &Invocation<'_>) -> bool {
    inv.args.iter().any(|w| {
        let t = w.text.to_ascii_lowercase();
        t.contains("prod") && !t.contains("product") || t.contains("live")
    })
}

fn is_read(verb: &str) -> bool {
    let verb = verb.to_ascii_lowercase();
    READ_VERBS.contains(&verb)
        || [
            "describe-",
            "list-",
            "get-",
            "show-",
            "lookup-",
            "search-",
            "ls-",
        ]
        .iter()
        .any(|p| verb.starts_with(p))
}

fn secretish(inv: &Invocation<'_>) -> bool {
    inv.args.iter().any(|w| {
        let t = w.text.to_ascii_lowercase();
        t.contains("secret")
            || t.contains("credential")
            || t.contains("password")
            || t == "get-login-password"
            || t == "print-access-token"
            || t == "print-identity-token"
            || t == "get-session-token"
            || t.contains("access-token")
            || t == "decrypt"
            || t == "get-parameter"
            || t == "get-parameters"
            || t == "export-credentials"
            || t == "kms"
    })
}

fn with_production(inv: &Invocation<'_>, j: Classification) -> Classification {
    if production_named(inv) && !j.capability.is_read_only() {
        j.reach(Reach::Production)
    } else {
        j
    }
}

fn cloud_cli(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags![
        "--profile",
        "--region",
        "--project",
        "-p",
        "--output",
        "-o",
        "--query",
        "--format",
        "--filter",
        "--subscription",
        "-g",
        "--resource-group",
        "--app",
        "-a",
        "--zone",
        "--endpoint-url",
        "--name",
        "-n",
        // Global value options: their values are not verbs (`--verbosity info`).
        "--verbosity",
        "--configuration",
        "--account",
        "--impersonate-service-account",
        "--billing-project",
        "--trace-token",
        "--color",
        "--ca-bundle",
        "--cli-read-timeout",
        "--cli-connect-timeout",
    ]);
    // rclone's config holds every remote's credentials: `show` and `dump` print them.
    if inv.program == "rclone" && positionals.first().is_some_and(|w| w.text == "config") {
        return match positionals.get(1).map(|w| w.text.as_str()) {
            Some("show" | "dump" | "redacted") => Classification::new(C::SecretRead),
            Some("file" | "paths" | "providers") => Classification::new(C::ExecInspect),
            _ => Classification::new(C::FsWriteOutside).reversibility(Reversibility::Hard),
        };
    }
    if inv.program == "rclone" && positionals.first().is_some_and(|w| w.text == "reveal") {
        return Classification::new(C::SecretRead);
    }
    if secretish(inv) {
        return Classification::new(C::SecretRead).reach(Reach::External);
    }
    let words: Vec<String> = positionals
        .iter()
        .map(|w| w.text.to_ascii_lowercase())
        .collect();
    // The verb is the last word that looks like one; `aws s3 ls`, `gcloud compute instances list`.
    let verb = words
        .iter()
        .rev()
        .find(|w| is_read(w) || is_write_verb(w))
        .cloned()
        .unwrap_or_default();
    if words.iter().any(|w| {
        w == "ssh"
            || w == "scp"
            || w == "exec"
            || w == "run-command"
            || w == "send-command"
            || w == "start-session"
            || w == "console"
    }) {
        return Classification::opaque(C::ExecRemote, "runs commands on a remote machine");
    }
    if inv.program == "rclone"
        || (words.first().map(String::as_str) == Some("s3")
            && matches!(verb.as_str(), "cp" | "sync" | "mv"))
    {
        // The direction decides: to a bucket is a send, from one is a fetch.
        let operands: Vec<&crate::shell::lex::Word> = positionals
            .iter()
            .copied()
            .skip(if inv.program == "rclone" { 1 } else { 2 })
            .collect();
        let remote = |w: &crate::shell::lex::Word| {
            w.text.contains("://") || (inv.program == "rclone" && w.text.contains(':'))
        };
        return match operands.split_last() {
            Some((dest, sources)) if !remote(dest) && sources.iter().all(|s| remote(s)) => {
                let mut j = Classification::new(C::NetFetch).reversibility(Reversibility::Easy);
                j.targets
                    .push(((*dest).clone(), crate::model::Access::Write));
                j
            }
            // `aws s3 cp --recursive` and `sync` follow links unless `--no-follow-symlinks`;
            // rclone with `-L`/`--copy-links`.
            Some((_, sources)) => Classification::new(C::NetSend)
                .reach(Reach::External)
                .following_links(if inv.program == "rclone" {
                    inv.has_any(flags!["-L", "--copy-links"])
                } else {
                    (verb == "sync" || inv.has("--recursive")) && !inv.has("--no-follow-symlinks")
                })
                .with_paths(
                    sources.iter().copied().filter(|s| !remote(s)),
                    crate::model::Access::Read,
                ),
            None => Classification::new(C::NetSend).reach(Reach::External),
        };
    }
    let j = if words.is_empty() || is_read(&verb) {
        Classification::new(C::ExecCloudRead)
    } else {
        let mut j = Classification::new(C::ExecCloud);
        if verb.starts_with("delete")
            || verb.starts_with("remove")
            || verb.starts_with("terminate")
            || verb == "rm"
            || verb == "rb"
            || verb.starts_with("destroy")
            || verb.starts_with("purge")
        {
            j = j.reversibility(Reversibility::Irreversible);
        }
        if inv.has_any(flags!["--recursive", "--all", "--force"]) {
            j = j.scale(Scale::Sweeping);
        }
        j
    };
    with_production(inv, j)
}

fn is_write_verb(word: &str) -> bool {
    name_set! {
        static WRITE = &[
            "create",
            "delete",
            "update",
            "put",
            "set",
            "deploy",
            "apply",
            "remove",
            "rm",
            "rb",
            "mb",
            "cp",
            "mv",
            "sync",
            "start",
            "stop",
            "restart",
            "terminate",
            "run",
            "invoke",
            "scale",
            "attach",
            "detach",
            "modify",
            "enable",
            "disable",
            "add",
            "destroy",
            "publish",
            "upload",
            "release",
            "rollback",
            "promote",
            "import",
            "purge",
            "reset",
            "tag",
            "untag",
        ];
    }
    WRITE.contains(word) || WRITE.iter().any(|w| word.starts_with(&format!("{w}-")))
}

fn kubectl(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags![
        "-n",
        "--namespace",
        "--context",
        "-o",
        "--output",
        "-l",
        "--selector",
        "-c",
        "--container",
        "--kubeconfig",
        "-f",
        "--filename",
        "-s",
        "--server",
        "--cluster",
        "--user",
        "--token",
        "--as",
        "--as-group",
        "--certificate-authority",
        "--client-certificate",
        "--client-key",
        "--request-timeout",
    ]);
    if inv.has("--kubeconfig") {
        return Classification::opaque(
            C::ExecCloud,
            "points kubectl at another cluster configuration",
        );
    }
    let j = match sub.as_str() {
        "exec" | "attach" | "debug" | "cp" | "port-forward" | "proxy" | "run" => {
            Classification::opaque(C::ExecContainer, "runs commands inside the cluster")
                .reach(Reach::External)
        }
        // `kubectl get pods,secrets` lists kinds separated by commas.
        "get"
            if inv.args.iter().any(|w| {
                w.text
                    .to_ascii_lowercase()
                    .split(',')
                    .any(|kind| kind.starts_with("secret"))
            }) =>
        {
            Classification::new(C::SecretRead).reach(Reach::External)
        }
        // `--raw` and `--flatten` print the embedded keys and tokens.
        "config"
            if inv
                .args
                .iter()
                .any(|w| w.text == "view" && inv.has_any(flags!["--raw", "--flatten"])) =>
        {
            Classification::new(C::SecretRead)
        }
        "config"
            if inv.args.iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "view" | "get-contexts" | "current-context" | "get-clusters"
                )
            }) =>
        {
            Classification::new(C::ExecCloudRead)
        }
        "config" => Classification::new(C::ExecCloud).reach(Reach::Machine),
        s if is_read(s) || s.is_empty() => Classification::new(C::ExecCloudRead),
        _ if inv.args.iter().any(|w| {
            matches!(
                w.text.as_str(),
                "--dry-run=client" | "--dry-run=server" | "--dry-run"
            )
        }) =>
        {
            Classification::new(C::ExecCloudRead)
        }
        "delete" | "drain" | "cordon" | "taint" => {
            Classification::new(C::ExecCloud).reversibility(Reversibility::Irreversible)
        }
        _ => Classification::new(C::ExecCloud),
    };
    with_production(inv, j)
}

fn helm(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags![
        "-n",
        "--namespace",
        "--kube-context",
        "-f",
        "--values",
        "--set",
        "-o",
        "--output",
        "--version",
        "--repo",
    ]);
    let j = match sub.as_str() {
        "template" | "lint" | "build" => Classification::new(C::ExecIacPlan),
        "login" | "token" => Classification::new(C::SecretRead),
        "uninstall" | "delete" | "destroy" => {
            Classification::new(C::ExecIac).reversibility(Reversibility::Irreversible)
        }
        s if is_read(s) || s.is_empty() => Classification::new(C::ExecCloudRead),
        "repo" | "dependency" | "dep" | "pull" | "fetch" => Classification::new(C::ExecPkg),
        _ => Classification::new(C::ExecIac),
    };
    with_production(inv, j)
}

fn iac(inv: &Invocation<'_>) -> Classification {
    let sub = inv.sub(flags![
        "-var",
        "-var-file",
        "-target",
        "-chdir",
        "--stack",
        "-s",
        "-i",
        "--inventory",
        "-e",
        "--extra-vars",
        "-l",
        "--limit",
    ]);
    if inv.args.iter().any(|w| w.text.starts_with("-chdir=")) {
        return Classification::opaque(C::ExecIac, "runs configuration from another directory");
    }
    let j = match (inv.program, sub.as_str()) {
        ("ansible" | "ansible-playbook", _) => {
            if inv.has_any(flags![
                "--check",
                "-C",
                "--syntax-check",
                "--list-hosts",
                "--list-tasks",
            ]) {
                Classification::new(C::ExecIacPlan)
            } else {
                Classification::new(C::ExecIac)
            }
        }
        ("vault", "read" | "kv" | "login" | "token") => {
            Classification::new(C::SecretRead).reach(Reach::External)
        }
        (_, "output") if inv.has_any(flags!["-json", "-raw", "--json"]) => {
            Classification::new(C::SecretRead).reach(Reach::External)
        }
        (_, "fmt") if !inv.has_any(flags!["-check", "--check"]) => {
            Classification::new(C::ExecBuild)
        }
        (
            _,
            "init" | "get" | "providers" | "version" | "fmt" | "validate" | "graph" | "show"
            | "output" | "state" | "workspace" | "console" | "plan" | "preview" | "synth" | "diff"
            | "list" | "ls" | "stack" | "whoami" | "about" | "config" | "status" | "",
        ) => {
            if sub == "state"
                && inv
                    .args
                    .iter()
                    .any(|w| matches!(w.text.as_str(), "rm" | "mv" | "push" | "replace-provider"))
            {
                Classification::new(C::ExecIac).reversibility(Reversibility::Irreversible)
            } else if sub == "output" || sub == "show" || sub == "state" {
                // Outputs and state hold secrets in plain text.
                Classification::new(C::ExecIacPlan).exposure(Exposure::ReadsSecrets)
            } else if sub == "init" || sub == "get" {
                Classification::new(C::ExecPkg)
            } else {
                Classification::new(C::ExecIacPlan)
            }
        }
        (_, "destroy" | "remove" | "rm" | "delete" | "taint") => {
            Classification::new(C::ExecIac).reversibility(Reversibility::Irreversible)
        }
        ("vagrant", "ssh") => Classification::opaque(C::ExecRemote, "a shell on another machine"),
        _ => Classification::new(C::ExecIac),
    };
    with_production(inv, j)
}
