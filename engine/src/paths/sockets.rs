//! Container runtimes' control sockets as a data table: whoever can talk to one can start a
//! privileged container that mounts `/`, so reaching it is root on the machine (the privilege
//! floor), whatever program connects (`curl --unix-socket`, `socat UNIX-CONNECT:`, `nc -U`,
//! `docker -H unix://…`, `DOCKER_HOST=…`). One row per socket file name, matched wherever the
//! file lies (`/var/run/docker.sock`, `/run/docker.sock`, `~/.docker/run/docker.sock`,
//! Colima's, Rancher Desktop's and rootless sockets under `/run/user/<uid>/`);
//! `engine/tests/data/places/sockets.toml` holds a case per row.
//!
//! Must not: hold placement logic (that is `paths.rs`).

use super::control::Row;

const fn row(path: &'static str, why: &'static str) -> Row {
    Row { path, why }
}

const ROOT: &str = "a container runtime's API: a container it starts can mount `/` as root";

/// Socket file names (lower case).
pub(crate) const CONTAINER_SOCKETS: &[Row] = &[
    row("docker.sock", ROOT),
    row("podman.sock", ROOT),
    row("containerd.sock", ROOT),
    row("crio.sock", ROOT),
    row("cri-dockerd.sock", ROOT),
    row("dockershim.sock", ROOT),
    row("buildkitd.sock", ROOT),
    row("docker_engine", ROOT),
];

/// Whether the last segment of `path` names a container runtime's socket (any case).
pub(crate) fn is_container_socket(path: &str) -> bool {
    // The last separator found byte by byte: a searcher for a set of characters costs more
    // than the short names it skips (this runs for every placed path).
    let name = path
        .bytes()
        .rposition(|b| b == b'/' || b == b'\\')
        .and_then(|at| path.get(at + 1..))
        .unwrap_or(path);
    CONTAINER_SOCKETS
        .iter()
        .any(|r| r.path.eq_ignore_ascii_case(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row has a case in `engine/tests/data/places/sockets.toml`.
    #[test]
    fn every_row_has_a_case() {
        let cases = include_str!("../../tests/data/places/sockets.toml");
        let rows: Vec<&str> = cases
            .lines()
            .filter_map(|l| l.strip_prefix("row = "))
            .map(|v| v.trim_matches(['"', '\'']))
            .collect();
        let missing: Vec<&str> = CONTAINER_SOCKETS
            .iter()
            .map(|r| r.path)
            .filter(|n| !rows.contains(n))
            .collect();
        assert!(missing.is_empty(), "rows without a case: {missing:?}");
    }
}
