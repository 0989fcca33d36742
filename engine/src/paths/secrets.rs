//! Credentials as a data table: files and directories whose contents are keys, tokens or
//! passwords, so reading them is a floor (and writing them too). One row per path, name or name
//! pattern with what it holds; `engine/tests/data/places/secrets.toml` holds a case per row.
//!
//! [`SECRET_DIRS`] rows are lower-case whole segments matched anywhere in a path (a directory row
//! covers everything below it); [`SECRET_FILES`] rows are file names; [`SECRET_NAME_PATTERNS`]
//! match a name by its beginning and end. Template copies (`.env.example`, `.env.sample`,
//! `.env.template`, …) are never secrets: `paths.rs` checks them first.
//!
//! Must not: hold placement logic (that is `paths.rs`).

use super::control::Row;

const fn row(path: &'static str, why: &'static str) -> Row {
    Row { path, why }
}

/// What the rows that predate this table hold (their names say which store).
const STORE: &str = "a credential store or a file that holds keys, tokens or passwords";

/// Credential directories and files, matched as whole segments anywhere in a path.
pub(crate) const SECRET_DIR_ROWS: &[Row] = &[
    row(".ssh", STORE),
    row(".aws", STORE),
    row(".gnupg", STORE),
    row(".kube", STORE),
    row(".azure", STORE),
    row(".password-store", STORE),
    row(".terraform.d", STORE),
    row(".vault", STORE),
    row(".config/gcloud", STORE),
    row(".config/gh", STORE),
    row(".config/hub", STORE),
    row(".config/op", STORE),
    row(".config/doctl", STORE),
    row(".local/share/keyrings", STORE),
    row(".docker/config.json", STORE),
    row(".cargo/credentials", STORE),
    row(".cargo/credentials.toml", STORE),
    row(".gem/credentials", STORE),
    row(".m2/settings.xml", STORE),
    row(".m2/settings-security.xml", STORE),
    row(".gradle/gradle.properties", STORE),
    row(".mozilla/firefox", STORE),
    row(".config/google-chrome", STORE),
    row(".config/chromium", STORE),
    row("library/keychains", STORE),
    row("library/application support/google/chrome", STORE),
    row("appdata/roaming/microsoft/credentials", STORE),
    row("appdata/roaming/microsoft/protect", STORE),
    row(".claude/.credentials.json", STORE),
    row(".config/claude", STORE),
    row(".config/sops", "sops and age private keys"),
    row(".cache/huggingface/token", "Hugging Face token"),
    row(".huggingface/token", "Hugging Face token (legacy place)"),
    row(".snowsql", "Snowflake SnowSQL connections with passwords"),
    row(".oci", "Oracle Cloud API keys"),
    row(".aliyun", "Alibaba Cloud access keys"),
    row(".bluemix", "IBM Cloud tokens"),
    row(".fly", "Fly.io access token"),
    row(".config/netlify", "Netlify token"),
    row(".config/ngrok", "ngrok authtoken"),
    row(".ngrok2", "ngrok authtoken (legacy place)"),
    row(".config/stripe", "Stripe API keys"),
    row(".dbt/profiles.yml", "dbt warehouse credentials"),
    row(".gemini/oauth_creds.json", "Gemini CLI OAuth tokens"),
    row(
        ".config/github-copilot",
        "GitHub Copilot OAuth tokens (apps.json, hosts.json)",
    ),
    row(".wrangler", "Cloudflare Wrangler token"),
    row(".config/.wrangler", "Cloudflare Wrangler token"),
    row(".kaggle", "Kaggle API key"),
    row(".tsh", "Teleport keys and certificates"),
    row(".config/hcloud", "Hetzner Cloud token"),
    row(".mc/config.json", "MinIO client keys"),
    row("config/database.yml", "Rails database passwords"),
    row(
        "secrets",
        "Docker and Compose secrets (one file per secret)",
    ),
    row(".config/doppler", "Doppler token"),
    row(".pulumi/credentials.json", "Pulumi access token"),
    row(".config/heroku", "Heroku token"),
    row(".netrc.gpg", "netrc, encrypted"),
    row(
        ".snowflake",
        "Snowflake CLI connections with passwords and keys",
    ),
    row(".netlify/config.json", "Netlify token (legacy place)"),
    row(
        ".config/configstore",
        "tokens of npm-distributed CLIs (Firebase, Vercel, Snyk, …)",
    ),
    row(".supabase/access-token", "Supabase access token"),
    row(".doppler", "Doppler token (legacy place)"),
    row(".railway", "Railway token"),
    row(".config/linode-cli", "Linode token"),
];

/// Credential file names.
pub(crate) const SECRET_FILE_ROWS: &[Row] = &[
    row(".env", STORE),
    row(".npmrc", STORE),
    row("npmrc", STORE),
    row(".yarnrc.yml", STORE),
    row(".pypirc", STORE),
    row(".netrc", STORE),
    row("_netrc", STORE),
    row(".git-credentials", STORE),
    row("credentials", STORE),
    row("credentials.json", STORE),
    row("credentials.yml", STORE),
    row("credentials.yaml", STORE),
    row("secrets.json", STORE),
    row("secrets.yaml", STORE),
    row("secrets.yml", STORE),
    row("secrets.toml", STORE),
    row("secrets.ini", STORE),
    row("auth.json", STORE),
    row("id_rsa", STORE),
    row("id_dsa", STORE),
    row("id_ecdsa", STORE),
    row("id_ed25519", STORE),
    row("id_xmss", STORE),
    row("id_ecdsa_sk", STORE),
    row("id_ed25519_sk", STORE),
    row("known_hosts", STORE),
    row("kubeconfig", STORE),
    row(".terraformrc", STORE),
    row("terraform.rc", STORE),
    row(".vault-token", STORE),
    row(".boto", STORE),
    row(".s3cfg", STORE),
    row(".rclone.conf", STORE),
    row("rclone.conf", STORE),
    row(".dockercfg", STORE),
    row(".pgpass", STORE),
    row(".my.cnf", STORE),
    row(".mylogin.cnf", STORE),
    row(".htpasswd", STORE),
    row("shadow", STORE),
    row("gshadow", STORE),
    row("shadow-", STORE),
    row("sudoers", STORE),
    row("master.passwd", STORE),
    row("logins.json", STORE),
    row("cookies", STORE),
    row("cookies.sqlite", STORE),
    row("login data", STORE),
    row("key3.db", STORE),
    row("key4.db", STORE),
    row(".claude.json", STORE),
    row(".credentials.json", STORE),
    row("hosts.yml", STORE),
    row("vault_pass", STORE),
    row(".vault_pass", STORE),
    row("vault-password", STORE),
    row(".bash_history", STORE),
    row(".zsh_history", STORE),
    row(".psql_history", STORE),
    row(".mysql_history", STORE),
    row(".node_repl_history", STORE),
    row(".python_history", STORE),
    row(".sqlite_history", STORE),
    row(".lesshst", STORE),
    row("ntds.dit", STORE),
    row("environ", STORE),
    row("vault_pass.txt", "Ansible vault password"),
    row(".vault-password", "Ansible vault password"),
    row("vault_password", "Ansible vault password"),
    row("cookies.txt", "a cookie jar: live sessions"),
    row("cookiejar", "a cookie jar: live sessions"),
    row("credentials.yml.enc", "Rails encrypted credentials"),
    row("master.key", "Rails master key"),
    row("wp-config.php", "WordPress database password and salts"),
    row(
        "local_settings.py",
        "Django local settings: database password, secret key",
    ),
    row(".token", "a bare token file"),
    row("token.json", "an OAuth token (Google client libraries)"),
    row("keystore.properties", "Android signing passwords"),
    row("key.properties", "Android signing passwords"),
    row(".yarnrc", "Yarn 1 registry token"),
    row(".databrickscfg", "Databricks tokens"),
    row(".sentryclirc", "Sentry token"),
    row("kaggle.json", "Kaggle API key"),
    row("service_account.json", "a cloud service-account key"),
    row("sa-key.json", "a cloud service-account key"),
    row(
        "local.settings.json",
        "Azure Functions settings: connection strings and keys",
    ),
];

/// A name pattern: the name starts with `prefix`, holds `part` somewhere after it (when not
/// empty) and ends with `suffix`, and what it holds.
pub(crate) struct Pattern {
    pub prefix: &'static str,
    pub part: &'static str,
    pub suffix: &'static str,
    pub why: &'static str,
}

const fn pattern(prefix: &'static str, suffix: &'static str, why: &'static str) -> Pattern {
    Pattern {
        prefix,
        part: "",
        suffix,
        why,
    }
}

/// A name that holds `part` and ends with `suffix`: generated names such as
/// `<project>-firebase-adminsdk-<id>-<hash>.json`.
const fn holding(part: &'static str, suffix: &'static str, why: &'static str) -> Pattern {
    Pattern {
        prefix: "",
        part,
        suffix,
        why,
    }
}

/// Credential files recognised by how their names begin and end.
pub(crate) const SECRET_NAME_PATTERNS: &[Pattern] = &[
    pattern(
        ".env.",
        "",
        "an environment file: the project's keys and passwords",
    ),
    pattern(
        ".env-",
        "",
        "an environment file: the project's keys and passwords",
    ),
    pattern(
        ".env_",
        "",
        "an environment file: the project's keys and passwords",
    ),
    pattern(
        "",
        ".env",
        "an environment file: the project's keys and passwords",
    ),
    pattern("client_secret", ".json", "a Google OAuth client secret"),
    pattern("service-account", ".json", "a cloud service-account key"),
    pattern("service_account", ".json", "a cloud service-account key"),
    pattern("", "-sa-key.json", "a cloud service-account key"),
    holding("firebase-adminsdk", ".json", "a Firebase Admin SDK key"),
    pattern(
        "",
        ".tfvars",
        "Terraform variable values: passwords and keys",
    ),
    pattern(
        "",
        ".tfvars.json",
        "Terraform variable values: passwords and keys",
    ),
    pattern(
        "appsettings.",
        ".json",
        "an ASP.NET settings file: connection strings",
    ),
    pattern(
        "terraform.tfstate",
        "",
        "Terraform state: every secret of the infrastructure",
    ),
    pattern("", ".token", "a bare token file"),
    pattern("vault_pass", "", "Ansible vault password"),
    pattern("vault-pass", "", "Ansible vault password"),
];

/// The paths of [`SECRET_DIR_ROWS`], as the segment index reads them.
pub(crate) const SECRET_DIRS: [&str; SECRET_DIR_ROWS.len()] =
    super::control::paths_of(SECRET_DIR_ROWS);
/// The names of [`SECRET_FILE_ROWS`].
pub(crate) const SECRET_FILES: [&str; SECRET_FILE_ROWS.len()] =
    super::control::paths_of(SECRET_FILE_ROWS);

/// What a lower-cased file name holds, when it matches a pattern.
pub(crate) fn pattern_holding(name: &str) -> Option<&'static str> {
    // The last and first bytes are compared before the whole suffix and prefix: most names
    // (`main.rs`) match no pattern's, and every placed path's name is asked.
    let (first, last) = (name.as_bytes().first(), name.as_bytes().last());
    SECRET_NAME_PATTERNS
        .iter()
        .find(|p| {
            name.len() >= p.prefix.len() + p.suffix.len()
                && p.suffix.as_bytes().last().is_none_or(|b| last == Some(b))
                && p.prefix.as_bytes().first().is_none_or(|b| first == Some(b))
                && name.starts_with(p.prefix)
                && name.ends_with(p.suffix)
                && (p.part.is_empty()
                    || name
                        .get(p.prefix.len()..name.len() - p.suffix.len())
                        .is_some_and(|middle| middle.contains(p.part)))
        })
        .map(|p| p.why)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row and pattern has a case in `engine/tests/data/places/secrets.toml`.
    #[test]
    fn every_row_has_a_case() {
        let cases = include_str!("../../tests/data/places/secrets.toml");
        let rows: Vec<&str> = cases
            .lines()
            .filter_map(|l| l.strip_prefix("row = "))
            .map(|v| v.trim_matches(['"', '\'']))
            .collect();
        let names = SECRET_DIR_ROWS
            .iter()
            .chain(SECRET_FILE_ROWS)
            .map(|r| r.path.to_string())
            .chain(SECRET_NAME_PATTERNS.iter().map(|p| match p.part {
                "" => format!("{}*{}", p.prefix, p.suffix),
                part => format!("{}*{part}*{}", p.prefix, p.suffix),
            }));
        let missing: Vec<String> = names.filter(|n| !rows.contains(&n.as_str())).collect();
        assert!(missing.is_empty(), "rows without a case: {missing:?}");
    }
}
