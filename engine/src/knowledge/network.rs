//! Network clients: HTTP fetchers (with their upload options), remote shells and copies, raw
//! sockets, and diagnostic lookups.
//!
//! A fetch is learnable at the network tier; anything that sends data (`curl -d @file`, `-T`,
//! `-F`, `wget --post-file`, `nc`, `scp` to a host) can exfiltrate and never is.

use super::classification::{Classification, Invocation, Judge};
use crate::model::{Access, Capability as C, Exposure, Reach, Reversibility};
use crate::shell::lex::Word;
use crate::static_index::flags;

pub(super) const TABLE: &[(&[&str], Judge)] = &[
    (
        &[
            "curl", "curlie", "xh", "http", "https", "httpie", "aria2c", "lynx", "w3m",
        ],
        http,
    ),
    (&["wget", "wget2"], wget),
    (&["ssh", "mosh", "autossh", "et"], ssh),
    (
        &["scp", "sftp", "ftp", "lftp", "tftp", "smbclient"],
        remote_copy,
    ),
    (&["rsync"], rsync),
    (
        &[
            "nc", "ncat", "netcat", "socat", "telnet", "openssl", "websocat", "cryptcat",
        ],
        socket,
    ),
    (
        &[
            "ping",
            "dig",
            "nslookup",
            "host",
            "traceroute",
            "tracepath",
            "mtr",
            "whois",
            "ifconfig",
            "ip",
            "ss",
            "netstat",
            "arp",
            "route",
            "nmap",
            "tcpdump",
            "iftop",
            "speedtest",
            "iperf",
            "iperf3",
        ],
        diagnostic,
    ),
];

fn upload_flags(inv: &Invocation<'_>) -> Vec<Word> {
    const DATA: &[&str] = &[
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-ascii",
        "--data-urlencode",
        "--json",
        "-F",
        "--form",
        "--form-string",
        "-T",
        "--upload-file",
    ];
    let mut sent = Vec::new();
    let mut iter = inv.args.iter().peekable();
    while let Some(word) = iter.next() {
        let t = word.text.as_str();
        let (flag, value) = match t.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (t, None),
        };
        let attached = DATA
            .iter()
            .find(|d| d.len() == 2 && t.starts_with(**d) && t.len() > 2)
            .map(|d| t.get(d.len()..).unwrap_or("").to_string());
        if DATA.contains(&flag) || attached.is_some() {
            let value = value
                .or(attached)
                .or_else(|| iter.next().map(|w| w.text.to_string()));
            let mut w = word.clone();
            w.set_text(value.unwrap_or_default());
            sent.push(w);
        }
    }
    sent
}

fn http(inv: &Invocation<'_>) -> Classification {
    // aria2c runs a command when a download starts, stops or ends.
    let hooks = flags![
        "--on-download-complete",
        "--on-download-error",
        "--on-download-start",
        "--on-download-pause",
        "--on-download-stop",
        "--on-bt-download-complete",
    ];
    if inv.program == "aria2c" && inv.has_any(hooks) {
        let mut j = Classification::opaque(C::NetFetch, "runs a command when a download ends");
        if let Some(hook) = inv.any_value(hooks) {
            j.targets.push((hook, Access::Execute));
        }
        return j;
    }
    if inv.has_any(flags!["-K", "--config"]) {
        return Classification::opaque(C::NetSend, "options come from a config file");
    }
    let urls: Vec<&Word> = inv.positionals(flags![
        "-o",
        "--output",
        "--output-dir",
        "-H",
        "--header",
        "-X",
        "--request",
        "-u",
        "--user",
        "-A",
        "--user-agent",
        "-e",
        "--referer",
        "-b",
        "--cookie",
        "-c",
        "--cookie-jar",
        "-w",
        "--write-out",
        "-m",
        "--max-time",
        "--connect-timeout",
        "-x",
        "--proxy",
        "-E",
        "--cert",
        "--key",
        "--cacert",
        "-r",
        "--range",
        "-d",
        "--data",
        "--data-binary",
        "--data-raw",
        "--data-urlencode",
        "--json",
        "-F",
        "--form",
        "-T",
        "--upload-file",
        "--retry",
        "-D",
        "--dump-header",
        "--unix-socket",
        "--abstract-unix-socket",
    ]);
    if urls.iter().any(|u| !u.is_literal()) {
        return Classification::opaque(C::NetFetch, "the address is only known at run time");
    }
    // `file://` reads a local file.
    let local: Vec<Word> = urls
        .iter()
        .filter_map(|u| u.text.strip_prefix("file://").map(Word::plain))
        .collect();
    if !local.is_empty() {
        let mut j = Classification::new(C::FsReadWorkspace).with_paths(local.iter(), Access::Read);
        for flag in [flags!["-o", "--output"]] {
            if let Some(out) = inv.any_value(flag) {
                j.targets.push((out, Access::Write));
            }
        }
        return j;
    }
    let sent = upload_flags(inv);
    let method = inv
        .any_value(flags!["-X", "--request"])
        .map(|w| w.text.to_ascii_uppercase());
    let httpie_send = matches!(inv.program, "http" | "https" | "xh" | "httpie")
        && inv.args.iter().any(|w| {
            w.text.contains(":=")
                || w.text.contains('@')
                || (w.text.contains('=') && !w.text.starts_with('-'))
        });
    let mut j = if !sent.is_empty()
        || httpie_send
        || method.as_deref().is_some_and(|m| m != "GET" && m != "HEAD")
    {
        let mut j = Classification::new(C::NetSend);
        for mut w in sent {
            // `-F name=@file` and `-F name=<file` name the file after the field name.
            if let Some((_, value)) = w
                .text
                .split_once('=')
                .filter(|(_, v)| v.starts_with(['@', '<']))
            {
                w.set_text(value.to_string());
            }
            // `@file` and `-T file` send a file's contents (`;type=…` is not part of the name).
            let path = w
                .text
                .trim_start_matches(['@', '<'])
                .split(';')
                .next()
                .unwrap_or("");
            if w.text.starts_with('@')
                || w.text.starts_with('<')
                || (!path.is_empty() && inv.has_any(flags!["-T", "--upload-file"]))
            {
                let mut p = w.clone();
                p.set_text(path.to_string());
                j.targets.push((p, Access::Read));
            }
        }
        j
    } else {
        Classification::new(C::NetFetch)
    };
    for (flag, letter) in [
        (flags!["-o", "--output"], b'o'),
        (flags!["-c", "--cookie-jar"], b'c'),
        (flags!["-D", "--dump-header"], b'D'),
        (flags!["--trace", "--trace-ascii"], 0),
    ] {
        // `-sSo FILE`: the last option of a bundle takes the next word.
        if let Some(out) = inv
            .any_value(flag)
            .or_else(|| bundled_value(inv.args, letter).cloned())
        {
            j.targets.push((out, Access::Write));
        }
    }
    // `--output-dir` holds what `-o` names too (`curl -o .bashrc --output-dir ~`).
    if inv.program == "curl"
        && let Some(dir) = inv.any_value(flags!["--output-dir"])
    {
        j.targets.push((dir, Access::Write));
        if let Some(out) = inv
            .any_value(flags!["-o", "--output"])
            .or_else(|| bundled_value(inv.args, b'o').cloned())
        {
            j = j.landing(out.text.to_string());
        }
    }
    if inv.has_any(flags![
        "-O",
        "--remote-name",
        "-J",
        "--remote-header-name",
        "--remote-name-all",
    ]) {
        // `curl -O` writes the address's last name in the working directory (or
        // `--output-dir`), through a link if that is one (curl opens it as any file); `-J` a
        // name the server picks.
        if inv.program != "curl" || !inv.has("--output-dir") {
            j.targets.push((Word::plain("."), Access::Write));
        }
        if inv.program == "curl" {
            let server_names = inv.has_any(flags!["-J", "--remote-header-name"]);
            for url in &urls {
                let name = remote_name(&url.text).filter(|_| !server_names);
                j = j.landing(name.unwrap_or_else(|| "*".to_string()));
            }
        }
    }
    if let Some(file) = inv.any_value(flags![
        "-b",
        "--cookie",
        "-E",
        "--cert",
        "--key",
        "-n",
        "--netrc-file",
        "-u",
        "--user",
    ]) {
        if file.text.contains('/') || file.text.contains('.') {
            j.targets.push((file, Access::Read));
        }
        if inv.has_any(flags!["-u", "--user", "--oauth2-bearer"])
            || inv
                .args
                .iter()
                .any(|w| w.text.to_ascii_lowercase().contains("authorization:"))
        {
            j = j.exposure(Exposure::ReadsSecrets);
        }
    }
    if inv.has_any(flags!["-n", "--netrc"]) {
        j = j.exposure(Exposure::ReadsSecrets);
    }
    // The socket the request goes through (a container runtime's is root on the machine).
    if let Some(socket) = inv.any_value(flags!["--unix-socket", "--abstract-unix-socket"]) {
        j.targets.push((socket, Access::Read));
    }
    j
}

fn wget(inv: &Invocation<'_>) -> Classification {
    let mut j = if inv.has_any(flags![
        "--post-file",
        "--post-data",
        "--body-file",
        "--body-data",
        "--method",
    ]) {
        let mut j = Classification::new(C::NetSend);
        if let Some(file) = inv.any_value(flags!["--post-file", "--body-file"]) {
            j.targets.push((file, Access::Read));
        }
        j
    } else {
        Classification::new(C::NetFetch)
    };
    let document = inv.any_value(flags!["-O", "--output-document"]);
    match &document {
        Some(out) if out.text != "-" => j.targets.push((out.clone(), Access::Write)),
        _ => {}
    }
    for log in [
        flags!["-o", "--output-file"],
        flags!["-a", "--append-output"],
    ] {
        if let Some(out) = inv.any_value(log).filter(|o| o.text != "-") {
            j.targets.push((out, Access::Write));
        }
    }
    let recursive = inv.has_any(flags![
        "-r",
        "--recursive",
        "-m",
        "--mirror",
        "-p",
        "--page-requisites"
    ]);
    if recursive {
        j = j.recursive(true);
    }
    if document.is_none() {
        // Without `-O`, wget writes the address's last name in the working directory (or
        // `-P`), through a link if that is one (with `-c` and `-N` it opens the existing file;
        // otherwise a taken name becomes `name.1`, `name.2`…, which may be links too: every
        // entry the name begins). A recursive fetch, a name from the server or from a
        // redirection writes names it picks, below directories it makes or finds.
        let dir = inv
            .any_value(flags!["-P", "--directory-prefix"])
            .unwrap_or_else(|| Word::plain("."));
        j.targets.push((dir, Access::Write));
        let server_names = recursive
            || inv.has_any(flags![
                "--content-disposition",
                "--trust-server-names",
                "-x",
                "--force-directories"
            ]);
        let urls = inv.positionals(flags![
            "-P",
            "--directory-prefix",
            "-o",
            "--output-file",
            "-a",
            "--append-output",
            "-U",
            "--user-agent",
            "--header",
            "-t",
            "--tries",
            "-T",
            "--timeout",
            "-l",
            "--level",
            "-A",
            "--accept",
            "-R",
            "--reject",
            "-D",
            "--domains",
            "--user",
            "--password",
            "--http-user",
            "--http-password",
            "-e",
            "--execute",
            "-i",
            "--input-file",
            "--config",
            "--post-file",
            "--post-data",
            "--body-file",
            "--body-data",
            "--method",
            "--load-cookies",
            "--save-cookies",
            "-w",
            "--wait",
            "--limit-rate",
            "-Q",
            "--quota"
        ]);
        for url in urls {
            let name = remote_name(&url.text)
                .filter(|n| !server_names && !crate::glob::is_glob(n))
                .map_or_else(|| "*".to_string(), |n| format!("{n}*"));
            j = j.landing(name);
        }
        j = j.writing_through_links(recursive);
    }
    if inv.has_any(flags!["-i", "--input-file", "-e", "--execute", "--config"]) {
        j.opaque = Some("options or addresses come from elsewhere".to_string());
    }
    j
}

fn ssh(inv: &Invocation<'_>) -> Classification {
    let valued = flags![
        "-p", "-i", "-l", "-o", "-F", "-L", "-R", "-D", "-J", "-W", "-b", "-c", "-E", "-m", "-O",
        "-Q", "-S", "-w", "-B", "-e", "-I",
    ];
    if inv.args.iter().any(|w| {
        let t = w.text.to_ascii_lowercase();
        t.contains("proxycommand")
            || t.contains("localcommand")
            || t.contains("permitlocalcommand")
            || t.contains("knownhostscommand")
    }) || inv.has("-F")
    {
        return Classification::opaque(C::ExecUnknown, "ssh options that run a local command");
    }
    let positionals = inv.positionals(valued);
    let mut j = Classification::new(C::ExecRemote);
    if inv.has("-N") && positionals.len() == 1 {
        // Forwarding only: no remote command, no shell.
    } else if positionals.len() > 1 {
        j.opaque = Some("runs a command on another machine".to_string());
    } else {
        j.opaque = Some("opens a shell on another machine".to_string());
    }
    if let Some(key) = inv.any_value(flags!["-i"]) {
        j.targets.push((key, Access::Read));
    }
    if inv.has_any(flags!["-R", "-L", "-D", "-W"]) {
        j = j.exposure(Exposure::CanExfiltrate);
    }
    j
}

fn is_remote_spec(text: &str) -> bool {
    let before_slash = text.split('/').next().unwrap_or(text);
    before_slash.contains(':') && !text.starts_with('/') && !text.starts_with('.')
        || text.contains("://")
}

/// The word after a bundle of short options that ends in `letter` (`-sSo FILE`), before `--`.
fn bundled_value(args: &[Word], letter: u8) -> Option<&Word> {
    let mut words = args.iter().take_while(|w| w.text != "--");
    while let Some(word) = words.next() {
        let t = word.text.as_bytes();
        if t.len() > 2
            && t.first() == Some(&b'-')
            && t.get(1) != Some(&b'-')
            && t.last() == Some(&letter)
            && t.iter().skip(1).all(u8::is_ascii_alphabetic)
        {
            return words.next();
        }
    }
    None
}

/// The last name of a URL's path, which `curl -O` and `wget` save it as; none when the
/// program's versions differ on it or it could be a path (a query or fragment, an escape, no
/// name, `.`/`..`, a glob of curl's).
fn remote_name(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    if rest.contains(['?', '#', '%', '\\', '[', ']', '{', '}', '*']) {
        return None;
    }
    let (_, path) = rest.split_once('/')?;
    let name = path.rsplit('/').next()?;
    (!matches!(name, "" | "." | "..")).then(|| name.to_string())
}

fn remote_copy(inv: &Invocation<'_>) -> Classification {
    let positionals = inv.positionals(flags![
        "-P", "-i", "-o", "-F", "-l", "-c", "-J", "-S", "-b", "-D"
    ]);
    if inv
        .args
        .iter()
        .any(|w| w.text.to_ascii_lowercase().contains("proxycommand"))
        || inv.has("-F")
        || inv.has("-S")
    {
        return Classification::opaque(C::ExecUnknown, "options that run a local command");
    }
    let Some((dest, sources)) = positionals.split_last() else {
        return Classification::opaque(C::NetSend, "an interactive transfer session");
    };
    if is_remote_spec(&dest.text)
        || matches!(inv.program, "sftp" | "ftp" | "lftp" | "tftp" | "smbclient")
    {
        // `scp -r` follows the links it meets in the tree it copies (its manual says so).
        Classification::new(C::NetSend)
            .following_links(inv.program == "scp" && inv.has("-r"))
            .with_paths(sources.iter().copied(), Access::Read)
    } else {
        let mut j = Classification::new(C::NetFetch).reversibility(Reversibility::Easy);
        j.targets.push(((*dest).clone(), Access::Write));
        // Into a directory, each remote file lands by its name, through a link if that is
        // one (scp opens it as any file), and `-r` through the links below it; a remote glob
        // lands names the engine cannot list.
        let recursive = inv.has("-r");
        for source in sources {
            let path = source.text.split_once(':').map_or("", |(_, path)| path);
            let path = path.trim_end_matches('/');
            let name = path.rsplit('/').next().unwrap_or(path);
            let known = !matches!(name, "" | "." | "..") && !crate::glob::is_glob(name);
            j = j.landing(if known {
                name.to_string()
            } else {
                "*".to_string()
            });
        }
        j.writing_through_links(recursive)
    }
}

fn rsync(inv: &Invocation<'_>) -> Classification {
    if inv.has_any(flags!["-e", "--rsh", "--rsync-path"])
        || inv
            .args
            .iter()
            .any(|w| w.text.starts_with("--rsh=") || w.text.starts_with("--rsync-path="))
    {
        return Classification::opaque(
            C::ExecUnknown,
            "rsync runs the program given with -e or --rsync-path",
        );
    }
    let positionals = inv.positionals(flags![
        "--exclude",
        "--include",
        "--filter",
        "-f",
        "--exclude-from",
        "--include-from",
        "--files-from",
        "--backup-dir",
        "--suffix",
        "--chmod",
        "--chown",
        "-T",
        "--temp-dir",
        "--log-file",
    ]);
    let Some((dest, sources)) = positionals.split_last() else {
        return Classification::new(C::ExecInspect);
    };
    let mut j = if is_remote_spec(&dest.text) {
        Classification::new(C::NetSend).with_paths(sources.iter().copied(), Access::Read)
    } else if sources.iter().any(|s| is_remote_spec(&s.text)) {
        let mut j = Classification::new(C::NetFetch).reversibility(Reversibility::Easy);
        j.targets.push(((*dest).clone(), Access::Write));
        j
    } else {
        let mut j = Classification::new(C::FsWriteWorkspace)
            .with_paths(sources.iter().copied(), Access::Read);
        j.targets.push(((*dest).clone(), Access::Write));
        j
    };
    if inv.has_any(flags![
        "--delete",
        "--delete-after",
        "--delete-before",
        "--delete-during",
        "--remove-source-files",
    ]) {
        j = j.reversibility(Reversibility::Irreversible);
    }
    let recursive = inv.has_any(flags!["-r", "-a", "--recursive", "--archive"]);
    // `-L`/`--copy-links` copies what every link leads to, `--copy-unsafe-links` what the
    // links leaving the tree lead to, `-k`/`--copy-dirlinks` the directories links lead to;
    // `-K`/`--keep-dirlinks` writes into a linked directory of the destination.
    let follows = recursive
        && inv.has_any(flags![
            "-L",
            "--copy-links",
            "--copy-unsafe-links",
            "-k",
            "--copy-dirlinks"
        ]);
    let keeps_dirlinks = recursive && inv.has_any(flags!["-K", "--keep-dirlinks"]);
    // The copy lands in the destination by each source's name (`src/`: its contents).
    j.copies_into = keeps_dirlinks;
    j.recursive(recursive)
        .following_links(follows)
        .writing_through_links(keeps_dirlinks)
}

fn socket(inv: &Invocation<'_>) -> Classification {
    if inv.program == "openssl" {
        return openssl(inv);
    }
    if inv.has_any(flags!["-e", "-c", "--exec", "--sh-exec", "--lua-exec"])
        || inv.program == "socat"
            && inv.args.iter().any(|w| {
                w.text.to_ascii_lowercase().contains("exec:")
                    || w.text.to_ascii_lowercase().contains("system:")
            })
    {
        return Classification::opaque(C::NetSend, "binds a program to a network socket");
    }
    Classification::new(C::NetSend)
}

/// openssl: `-in`/`-key` files are read, `-out`/`-keyout` files written, and an engine or a
/// provider directory is code it loads.
fn openssl(inv: &Invocation<'_>) -> Classification {
    if inv.has_any(flags!["-engine", "-keygen_engine", "-provider-path"]) {
        let mut j = Classification::opaque(C::ExecUnknown, "openssl loads an engine or provider");
        if let Some(module) = inv.value(flags!["-engine", "-keygen_engine", "-provider-path"]) {
            j.targets.push((module.clone(), Access::Execute));
        }
        return j;
    }
    let sub = inv.sub(flags![]);
    let writes_out = inv.has_any(flags!["-out", "-keyout"]);
    let mut j = if matches!(sub.as_str(), "s_client" | "s_server") {
        Classification::new(C::NetSend)
    } else if matches!(
        sub.as_str(),
        "version" | "x509" | "dgst" | "list" | "ciphers" | "rand"
    ) && !writes_out
    {
        Classification::new(C::ExecInspect)
    } else {
        Classification::new(C::FsWriteWorkspace).reach(Reach::Machine)
    };
    for (flag, access) in [
        ("-in", Access::Read),
        ("-key", Access::Read),
        ("-inkey", Access::Read),
        ("-signkey", Access::Read),
        ("-CAkey", Access::Read),
        ("-out", Access::Write),
        ("-keyout", Access::Write),
    ] {
        if let Some(path) = inv.value_of(flag) {
            j.targets.push((path.clone(), access));
        }
    }
    j
}

fn diagnostic(inv: &Invocation<'_>) -> Classification {
    // `ip netns exec NS CMD` and `ip vrf exec NAME CMD` run CMD.
    if inv.program == "ip" && inv.args.iter().any(|w| w.text == "exec") {
        return Classification::opaque(
            C::ExecPrivilege,
            "runs a command in another network namespace",
        );
    }
    match inv.program {
        "nmap" | "tcpdump" => Classification::new(C::NetSend).reach(Reach::Network),
        "ip" | "ifconfig" | "route" | "arp"
            if inv.args.iter().any(|w| {
                matches!(
                    w.text.as_str(),
                    "add"
                        | "del"
                        | "delete"
                        | "set"
                        | "flush"
                        | "change"
                        | "replace"
                        | "up"
                        | "down"
                )
            }) =>
        {
            Classification::new(C::ExecProcess).reversibility(Reversibility::Hard)
        }
        "ip" | "ifconfig" | "ss" | "netstat" | "arp" | "route" => {
            Classification::new(C::ExecInspect).reach(Reach::Machine)
        }
        _ => Classification::new(C::NetFetch),
    }
}
