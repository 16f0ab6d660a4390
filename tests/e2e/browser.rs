//! stub
#[test]
fn browser_stub() {
    let _ =
        fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
}
