//! The plots: every SVG is well-formed and carries its axis labels; every PNG decodes at the
//! plot's size with real content and drawn text; without a font the SVGs are still written.

use std::collections::HashSet;
use std::path::Path;

use leastgrant_report::{FontChoice, Options, write_report, write_report_with};

use crate::fixture::{self, PLOTS, Shape};

/// The axis labels each plot must carry (units stated).
const AXIS_LABELS: [(&str, &[&str]); 6] = [
    (
        "learning-curves",
        &[
            "prompt rate (% of calls asked)",
            "calls into the project&apos;s history (windows of 50)",
        ],
    ),
    (
        "frontier",
        &[
            "prompt rate (% of calls asked)",
            "misses (refused calls let through)",
        ],
    ),
    ("outcomes", &["share of calls (%)"]),
    ("capabilities", &["share of actions (%)"]),
    ("friction", &["prompts (calls asked)"]),
    (
        "time-to-promotion",
        &[
            "time from first sighting to promotion",
            "signatures promoted (count)",
        ],
    ),
];

/// Checks that `text` is well-formed XML as far as a report needs: tags balance, attributes
/// are quoted, every `&` starts an entity. Returns the element names seen.
pub fn check_xml(text: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('<') {
        check_entities(&rest[..open]);
        let close = rest[open..].find('>').expect("an unclosed tag") + open;
        let tag = &rest[open + 1..close];
        rest = &rest[close + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            let top = stack
                .pop()
                .unwrap_or_else(|| panic!("`</{name}>` closes nothing"));
            assert_eq!(top, name.trim(), "`</{name}>` closes `<{top}>`");
            continue;
        }
        let name: String = tag
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '/')
            .collect();
        assert!(!name.is_empty(), "an empty tag `<{tag}>`");
        assert_eq!(
            tag.matches('"').count() % 2,
            0,
            "unbalanced quotes in `<{tag}>`"
        );
        check_entities(tag);
        seen.push(name.clone());
        if !tag.ends_with('/') {
            stack.push(name);
        }
    }
    check_entities(rest);
    assert!(stack.is_empty(), "unclosed elements: {stack:?}");
    seen
}

fn check_entities(text: &str) {
    for (at, _) in text.match_indices('&') {
        let entity: String = text[at + 1..].chars().take_while(|c| *c != ';').collect();
        let ok = entity.len() < 10
            && (entity.chars().all(|c| c.is_ascii_alphabetic())
                || entity
                    .strip_prefix('#')
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit())))
            && !entity.is_empty();
        assert!(
            ok,
            "a bare `&` near `{}`",
            &text[at..(at + 20).min(text.len())]
        );
    }
}

/// `width="…" height="…"` of the SVG's root element.
fn svg_size(svg: &str) -> (u32, u32) {
    let root = &svg[svg.find("<svg").unwrap()..];
    let root = &root[..root.find('>').unwrap()];
    let attr = |name: &str| -> u32 {
        let at = root.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        root[at..].split('"').next().unwrap().parse().unwrap()
    };
    (attr("width"), attr("height"))
}

#[test]
fn without_a_font_every_svg_is_written_with_its_axis_labels_and_pngs_are_skipped() {
    let dir = fixture::scratch("svg-only");
    fixture::write(&dir.join("replay"), Shape::default());
    let out = dir.join("report");
    let written = write_report_with(
        &dir.join("replay"),
        &out,
        &Options {
            font: FontChoice::None,
        },
    )
    .unwrap();
    assert_eq!(written.font, None);
    assert!(
        written.notes.iter().any(|n| n.starts_with("PNGs skipped")),
        "{:?}",
        written.notes
    );
    for (name, labels) in AXIS_LABELS {
        let path = out.join("plots").join(format!("{name}.svg"));
        assert!(written.files.contains(&path), "{name}.svg is listed");
        let svg = fixture::read(&path);
        let elements = check_xml(&svg);
        assert_eq!(elements.first().map(String::as_str), Some("svg"), "{name}");
        assert!(
            elements.iter().filter(|e| *e == "text").count() > 5,
            "{name} has text"
        );
        for label in labels {
            // plotters escapes `'` as `&apos;`; the other labels have nothing to escape.
            assert!(
                svg.contains(label),
                "{name}.svg lacks the axis label `{label}`"
            );
        }
        assert!(!out.join("plots").join(format!("{name}.png")).exists());
    }
    // The note reaches the pages.
    assert!(fixture::read(&written.index).contains("PNGs skipped"));
    assert!(fixture::read(&written.markdown).contains("PNGs skipped"));
    // report.md points at the SVGs when there is no PNG.
    assert!(fixture::read(&written.markdown).contains("](plots/frontier.svg)"));
}

#[test]
fn pngs_decode_at_the_plot_size_with_content_and_text() {
    let dir = fixture::scratch("png");
    fixture::write(&dir.join("replay"), Shape::default());
    let out = dir.join("report");
    let written = write_report(&dir.join("replay"), &out).unwrap();
    let Some(font) = &written.font else {
        println!(
            "skipped: no TrueType font on this machine ({:?})",
            written.notes
        );
        return;
    };
    println!("font: {}", font.display());
    assert!(written.notes.is_empty(), "{:?}", written.notes);
    for name in PLOTS {
        let png_path = out.join("plots").join(format!("{name}.png"));
        assert!(written.files.contains(&png_path), "{name}.png is listed");
        let expected = svg_size(&fixture::read(
            &out.join("plots").join(format!("{name}.svg")),
        ));
        let (size, pixels) = decode(&png_path);
        assert_eq!(size, expected, "{name}.png has the plot's size");
        let (w, h) = (size.0 as usize, size.1 as usize);
        let colours: HashSet<[u8; 3]> = pixels.iter().copied().collect();
        assert!(
            colours.len() > 30,
            "{name}.png has {} colours",
            colours.len()
        );
        let inked = pixels.iter().filter(|p| **p != [255, 255, 255]).count();
        assert!(
            inked * 50 > w * h,
            "{name}.png: only {inked} of {} pixels drawn",
            w * h
        );
        // The title is text alone: dark pixels in the band above the legend prove the font drew.
        let title_ink = pixels[..w * 44]
            .iter()
            .filter(|p| p.iter().all(|c| *c < 120))
            .count();
        assert!(
            title_ink > 300,
            "{name}.png: the title drew {title_ink} dark pixels"
        );
    }
}

#[test]
fn a_report_without_a_font_removes_the_pngs_an_earlier_one_wrote() {
    let dir = fixture::scratch("stale");
    fixture::write(&dir.join("replay"), Shape::default());
    let out = dir.join("report");
    let first = write_report(&dir.join("replay"), &out).unwrap();
    if first.font.is_none() {
        println!("skipped: no TrueType font on this machine");
        return;
    }
    assert!(out.join("plots/frontier.png").exists());
    let second = write_report_with(
        &dir.join("replay"),
        &out,
        &Options {
            font: FontChoice::None,
        },
    )
    .unwrap();
    assert!(!out.join("plots/frontier.png").exists());
    assert!(
        second
            .files
            .iter()
            .all(|f| f.extension().is_none_or(|e| e != "png"))
    );
}

#[test]
fn a_named_file_that_is_no_font_skips_the_pngs_with_its_name() {
    let dir = fixture::scratch("bad-font");
    fixture::write(&dir.join("replay"), Shape::default());
    let bogus = dir.join("bogus.ttf");
    std::fs::write(&bogus, b"not a font").unwrap();
    let written = write_report_with(
        &dir.join("replay"),
        &dir.join("report"),
        &Options {
            font: FontChoice::File(bogus),
        },
    )
    .unwrap();
    assert_eq!(written.font, None);
    assert!(
        written.notes.iter().any(|n| n.contains("bogus.ttf")),
        "{:?}",
        written.notes
    );
    assert_eq!(
        written
            .files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "svg"))
            .count(),
        6
    );
}

/// Decodes a PNG into RGB pixels.
pub fn decode(path: &Path) -> ((u32, u32), Vec<[u8; 3]>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("{}: unexpected colour type {other:?}", path.display()),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let pixels = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    ((info.width, info.height), pixels)
}

/// The texts of an SVG's `<text>` elements, in document order.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let body = &t[t.find('>').unwrap() + 1..];
            body[..body.find("</text>").unwrap()].trim().to_string()
        })
        .collect()
}

#[test]
fn the_capability_mix_shows_each_share_most_first_with_the_tail_as_other() {
    let dir = fixture::scratch("capabilities-svg");
    fixture::write(&dir.join("replay"), Shape::default());
    let out = dir.join("report");
    write_report_with(
        &dir.join("replay"),
        &out,
        &Options {
            font: FontChoice::None,
        },
    )
    .unwrap();
    let svg = fixture::read(&out.join("plots/capabilities.svg"));
    check_xml(&svg);
    let texts = svg_texts(&svg);
    let at = |text: &str| {
        texts
            .iter()
            .position(|t| t == text)
            .unwrap_or_else(|| panic!("capabilities.svg lacks `{text}`: {texts:?}"))
    };
    at("What the agents did: capability mix");
    at("1,000 actions in 3 projects, by capability (the same under every setting)");
    at("share of actions (%)");
    // Summed across the three projects, most first, each with its count and share.
    for pair in [
        ["fs.read.workspace", "400 (40.0%)"],
        ["exec.test", "150 (15.0%)"],
        ["exec.interpreter", "8 (0.8%)"],
        ["other", "22 (2.2%)"],
    ] {
        assert_eq!(at(pair[0]) + 1, at(pair[1]), "{pair:?}");
    }
    assert!(at("fs.read.workspace") < at("exec.test"));
    assert!(at("exec.test") < at("exec.interpreter"));
    assert!(at("exec.interpreter") < at("other"));
    // Thirteen capabilities and `other`; the five smallest are only in `other`.
    let rows: Vec<&String> = texts
        .iter()
        .filter(|t| fixture::CAPABILITIES.iter().any(|(c, _)| t == c) || *t == "other")
        .collect();
    assert_eq!(rows.len(), 14, "{rows:?}");
    for hidden in ["exec.unknown", "secret.read", "exec.vcs.publish"] {
        assert!(
            !texts.iter().any(|t| t == hidden),
            "{hidden} has its own row"
        );
    }
}

#[test]
fn the_capability_png_decodes_at_the_plot_size_with_its_bars() {
    let dir = fixture::scratch("capabilities-png");
    fixture::write(&dir.join("replay"), Shape::default());
    let out = dir.join("report");
    let written = write_report(&dir.join("replay"), &out).unwrap();
    if written.font.is_none() {
        println!("skipped: no TrueType font on this machine");
        return;
    }
    let png_path = out.join("plots/capabilities.png");
    assert!(written.files.contains(&png_path));
    let expected = svg_size(&fixture::read(&out.join("plots/capabilities.svg")));
    let (size, pixels) = decode(&png_path);
    assert_eq!(size, expected);
    // The capabilities' bars in blue (40% of the axis for the first alone), `other` in grey.
    let count = |rgb: [u8; 3]| pixels.iter().filter(|p| **p == rgb).count();
    let (blue, grey) = (count([0, 114, 178]), count([150, 150, 150]));
    assert!(blue > 20_000, "{blue} blue pixels");
    assert!(grey > 300, "{grey} grey pixels");
}

#[test]
fn the_outcomes_plot_splits_each_settings_misses_by_stake() {
    let dir = fixture::scratch("outcomes-stake");
    fixture::write(&dir, Shape::default());
    let options = Options {
        font: FontChoice::None,
    };
    write_report_with(&dir, &dir.join("report"), &options).unwrap();
    let svg = fixture::read(&dir.join("report/plots/outcomes.svg"));
    let texts = svg_texts(&svg);
    // `observe` let through all 40 refusals, 20 of them risky (the fixture's credential reads);
    // the recommendation's one miss is routine.
    assert!(
        texts.iter().any(|t| t == "40 missed (20 risky), 0 caught"),
        "{texts:?}"
    );
    assert!(
        texts.iter().any(|t| t == "1 missed (0 risky), 39 caught"),
        "{texts:?}"
    );
}

#[test]
fn a_budget_on_risky_misses_is_not_drawn_on_the_axis_of_all_misses() {
    let options = Options {
        font: FontChoice::None,
    };
    let frontier_texts = |dir: &Path| {
        write_report_with(dir, &dir.join("report"), &options).unwrap();
        svg_texts(&fixture::read(&dir.join("report/plots/frontier.svg")))
    };
    let dir = fixture::scratch("frontier-budget-all");
    fixture::write(&dir, Shape::default());
    let texts = frontier_texts(&dir);
    assert!(texts.iter().any(|t| t == "miss budget"), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("risky misses only")));

    let dir = fixture::scratch("frontier-budget-risky");
    fixture::write(&dir, Shape::default());
    let path = dir.join("summary.json");
    let mut summary: serde_json::Value = serde_json::from_str(&fixture::read(&path)).unwrap();
    summary["assumptions"]["miss_budget_on"] = "risky".into();
    std::fs::write(&path, summary.to_string()).unwrap();
    let texts = frontier_texts(&dir);
    assert!(!texts.iter().any(|t| t == "miss budget"), "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("the 2.0% miss budget counts risky misses only (not drawn)")),
        "{texts:?}"
    );
}
