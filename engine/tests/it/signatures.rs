//! Property (issue 13): the signature of a command differs whenever a word that changes reach or
//! what runs differs — the program, a path's placement class, an interpreter's flag, a redirect
//! target's placement, a privilege wrapper, a `git -c` key — whatever harmless display words
//! (which the signature abstracts) surround it.

use proptest::prelude::*;

use crate::support::analyze_command;

/// One command template with a slot, and words for the slot that each change reach or what runs.
const SLOTS: &[(&str, &[&str])] = &[
    // The program.
    (
        "{} README.md",
        &[
            "cat", "rm", "python", "bash", "chmod +x", "git add", "source", "vim",
        ],
    ),
    // A path's placement class: workspace, credential, persistence, control, outside.
    (
        "cat {}",
        &[
            "README.md",
            "~/.ssh/id_rsa",
            "~/.bashrc",
            ".claude/settings.json",
            "/etc/hosts",
            "../other/x.md",
        ],
    ),
    (
        "grep -rn TODO {}",
        &["src", "~/.aws", "/etc", "../other", ".git/hooks"],
    ),
    // An interpreter's flag.
    ("python {} x", &["-c", "-m", "-i"]),
    // A redirect target's placement.
    (
        "echo done > {}",
        &[
            "out.txt",
            "~/.bashrc",
            ".claude/settings.json",
            "/tmp/x",
            "../x.txt",
        ],
    ),
    // A wrapper, and a git option that runs a program.
    ("{} git status", &["", "sudo", "GIT_PAGER=x", "FOO=1"]),
    (
        "git {} status",
        &["", "-c core.pager=x", "-c core.fsmonitor=x", "-c alias.x=y"],
    ),
];

/// Display words the signature abstracts, added to both sides.
const NOISE: &[&str] = &["", " -n", " -q", " -v"];

fn signatures(command: &str) -> Vec<String> {
    analyze_command(command)
        .actions
        .into_iter()
        .map(|a| a.signature)
        .collect()
}

proptest! {
    #[test]
    fn a_word_that_changes_reach_or_what_runs_changes_the_signature(
        slot in 0..SLOTS.len(),
        a in 0usize..16,
        b in 0usize..16,
        noise in 0..NOISE.len(),
    ) {
        let (template, words) = SLOTS[slot];
        let (a, b) = (a % words.len(), b % words.len());
        prop_assume!(a != b);
        let noisy = |word: &str| format!("{}{}", template.replace("{}", word), NOISE[noise]);
        let (left, right) = (noisy(words[a]), noisy(words[b]));
        prop_assert_ne!(
            signatures(&left),
            signatures(&right),
            "`{}` and `{}` share a signature",
            left,
            right
        );
    }
}

/// The other direction, as examples: harmless variants share a signature.
#[test]
fn harmless_variants_share_a_signature() {
    for group in [
        &[
            "git status",
            "git status -sb",
            "git status --porcelain",
            "git -c color.ui=always status",
        ][..],
        &["cat README.md", "cat -n src/main.py", "cat docs/guide.md"],
        &[
            "grep -rn TODO src",
            "grep -rni fixme tests",
            "grep -rn .env src",
        ],
        &[
            "sed -n 1,20p README.md",
            "sed -n '/TODO/p' src/util.py",
            "sed -n '$p' x.txt",
        ],
        &[
            "find . -name '*.py'",
            "find src -name '.env' -type f",
            "find . -name '*.pem'",
        ],
        &[
            "python -m pytest",
            "python3 -m pytest -q -x tests/test_main.py -k main",
        ],
    ] {
        let first = signatures(group[0]);
        for command in &group[1..] {
            assert_eq!(signatures(command), first, "`{command}` and `{}`", group[0]);
        }
    }
}
