//! The page in a real browser: headless Chromium renders `index.html` to a screenshot that is
//! not blank. Skipped (with a printed reason) where no Chromium is installed.

use std::path::PathBuf;
use std::process::Command;

use leastgrant_report::write_report;

use crate::fixture::{self, Shape};
use crate::plots::decode;

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|p| p.is_file())
}

#[test]
fn chromium_renders_the_page() {
    let Some(browser) = chromium() else {
        println!("skipped: no chromium");
        return;
    };
    let dir = fixture::scratch("browser");
    fixture::write(&dir.join("replay"), Shape::default());
    let written = write_report(&dir.join("replay"), &dir.join("report")).unwrap();
    let shot = dir.join("screenshot.png");
    let output = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-dev-shm-usage",
            &format!("--user-data-dir={}", dir.join("profile").display()),
            &format!("--screenshot={}", shot.display()),
            "--window-size=1280,2000",
            &format!("file://{}", written.index.display()),
        ])
        .output()
        .unwrap();
    assert!(
        shot.exists(),
        "{} wrote no screenshot: {}",
        browser.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let ((w, h), pixels) = decode(&shot);
    assert_eq!((w, h), (1280, 2000));
    let colours: std::collections::HashSet<[u8; 3]> = pixels.iter().copied().collect();
    assert!(
        colours.len() > 50,
        "the screenshot has {} colours",
        colours.len()
    );
    let inked = pixels.iter().filter(|p| p.iter().any(|c| *c < 200)).count();
    assert!(inked > 10_000, "the screenshot has {inked} dark pixels");
    // The browser profile is large; nothing here is needed after a pass.
    let _ = std::fs::remove_dir_all(&dir);
}
