//! A real browser for the UI's tests: Debian's headless Chromium through chromedriver
//! (WebDriver, fantoccini). Every page a test photographs goes into `target/ui-screenshots/`,
//! or into the folder `HETSIM_UI_SCREENSHOTS` names.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use super::{available_or_skip, free_port, in_ci, reachable, repo, Proc};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// chromedriver on a free port, or `None` (after saying why) where it is not installed
/// and this is not CI.
pub fn chromedriver() -> Option<(Proc, u16)> {
    let installed = Path::new(CHROMEDRIVER).exists() && Path::new(CHROMIUM).exists();
    let why = format!(
        "the browser tests need Chromium: {CHROMEDRIVER} or {CHROMIUM} is missing (apt-get install chromium chromium-driver)"
    );
    if !available_or_skip(installed, &why, in_ci()) {
        return None;
    }
    let port = free_port();
    let child = std::process::Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let driver = Proc(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !reachable(port) {
        assert!(Instant::now() < deadline, "chromedriver did not listen on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    Some((driver, port))
}

/// A headless Chromium session on the server at `base`.
pub struct Browser {
    pub client: Client,
    base: String,
    shots: PathBuf,
}

impl Browser {
    pub async fn open(driver_port: u16, server_port: u16) -> Browser {
        let mut capabilities = serde_json::Map::new();
        capabilities.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"],
            }),
        );
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{driver_port}"))
            .await
            .expect("a Chromium session");
        let shots = std::env::var_os("HETSIM_UI_SCREENSHOTS")
            .map(|d| repo().join(d))
            .unwrap_or_else(|| repo().join("target/ui-screenshots"));
        std::fs::create_dir_all(&shots).unwrap();
        Browser {
            client,
            base: format!("http://127.0.0.1:{server_port}"),
            shots,
        }
    }

    pub async fn goto(&self, path: &str) {
        self.client.goto(&format!("{}{path}", self.base)).await.unwrap();
    }

    pub async fn current_path(&self) -> String {
        self.client.current_url().await.unwrap().path().to_owned()
    }

    pub async fn text(&self, css: &str) -> String {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .text()
            .await
            .unwrap()
    }

    pub async fn count(&self, css: &str) -> usize {
        self.client.find_all(Locator::Css(css)).await.unwrap().len()
    }

    pub async fn fill(&self, css: &str, text: &str) {
        let field = self
            .client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"));
        field.clear().await.unwrap();
        field.send_keys(text).await.unwrap();
    }

    /// Chooses `files` in the file input `css` (chromedriver takes their canonical paths, one
    /// a line).
    pub async fn attach(&self, css: &str, files: &[PathBuf]) {
        let paths: Vec<String> = files
            .iter()
            .map(|f| {
                f.canonicalize()
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()))
            })
            .map(|f| f.display().to_string())
            .collect();
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .send_keys(&paths.join("\n"))
            .await
            .unwrap();
    }

    /// Sets a textarea's text whole (typing a script key by key is slow and the editor
    /// indents on Tab), then tells the page it changed.
    pub async fn paste(&self, css: &str, text: &str) {
        let script = "const t = document.querySelector(arguments[0]); t.value = arguments[1]; t.dispatchEvent(new Event('input', {bubbles: true}));";
        self.client
            .execute(script, vec![json!(css), json!(text)])
            .await
            .unwrap();
    }

    /// Clicks `css` and waits for the next page to load (the old one's root goes stale).
    pub async fn click(&self, css: &str) {
        let old = self.client.find(Locator::Css("html")).await.unwrap();
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .click()
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while old.tag_name().await.is_ok() {
            assert!(Instant::now() < deadline, "clicking {css} loaded no page");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.client
            .wait()
            .for_element(Locator::Css("body"))
            .await
            .unwrap();
    }

    /// Clicks `css`, whose form asks for a confirmation, and answers it: accepted, the form
    /// posts and the next page loads; dismissed, nothing happens.
    pub async fn click_and_confirm(&self, css: &str, accept: bool) {
        let old = self.client.find(Locator::Css("html")).await.unwrap();
        let button = self.client.find(Locator::Css(css)).await;
        button
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .click()
            .await
            .unwrap();
        let question = self.client.get_alert_text().await.expect("a confirmation dialog");
        assert!(
            question.starts_with("Cancel this") || question.starts_with("Delete this"),
            "{question}"
        );
        if !accept {
            self.client.dismiss_alert().await.unwrap();
            assert!(
                old.tag_name().await.is_ok(),
                "a dismissed confirmation loads no page"
            );
            return;
        }
        self.client.accept_alert().await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while old.tag_name().await.is_ok() {
            assert!(Instant::now() < deadline, "confirming {css} loaded no page");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Reloads the page until `css` shows `wanted` in its text (a run finishing).
    pub async fn reload_until(&self, css: &str, wanted: &str) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            self.client.refresh().await.unwrap();
            if let Ok(element) = self.client.find(Locator::Css(css)).await {
                if element.text().await.unwrap_or_default().contains(wanted) {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "{css} never showed {wanted:?}");
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    }

    /// A picture of the whole page: the window is made as tall as the document first.
    pub async fn shoot(&self, name: &str) {
        let height = self
            .client
            .execute("return document.documentElement.scrollHeight;", vec![])
            .await
            .unwrap()
            .as_u64()
            .unwrap_or(900);
        self.client
            .set_window_size(1280, (height as u32 + 140).clamp(600, 4000))
            .await
            .unwrap();
        let png = self.client.screenshot().await.unwrap();
        std::fs::write(self.shots.join(format!("{name}.png")), png).unwrap();
        self.client.set_window_size(1280, 900).await.unwrap();
    }
}
