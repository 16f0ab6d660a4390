//! Finding and opening serial ports.

use serde::Serialize;
use serialport::{SerialPort, SerialPortType};
use std::time::Duration;

/// DGT's USB vendor id (1115).
pub const DGT_USB_VENDOR: u16 = 0x045B;

/// Opens a port as DGT boards need it: 9600 baud, 8 data bits, no parity, 1 stop bit, no flow
/// control (dgt-protocol.md §1), with a short read timeout so the session loop stays responsive.
pub fn open(path: &str) -> serialport::Result<Box<dyn SerialPort>> {
    serialport::new(path, 9600)
        .data_bits(serialport::DataBits::Eight)
        .parity(serialport::Parity::None)
        .stop_bits(serialport::StopBits::One)
        .flow_control(serialport::FlowControl::None)
        .timeout(Duration::from_millis(20))
        .open()
}

/// A serial port the system knows about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PortInfo {
    pub path: String,
    /// "usb", "bluetooth", "pci", "other"
    pub kind: String,
    pub vendor_id: Option<u16>,
    pub product_id: Option<u16>,
    pub manufacturer: Option<String>,
    pub product: Option<String>,
    pub serial_number: Option<String>,
    /// Vendor id, names or the device name suggest a DGT board.
    pub looks_like_dgt: bool,
}

fn name_looks_like_dgt(s: &str) -> bool {
    let s = s.to_ascii_uppercase();
    s.contains("DGT") || s.contains("PCS-REVII") || s.contains("DIGITAL GAME TECHNOLOGY")
}

/// The ports the operating system lists, plus any extra paths (for example emulator links or
/// `/dev/rfcomm*` Bluetooth ports bound by hand), each marked when it looks like a DGT board.
pub fn list(extra: &[String]) -> Vec<PortInfo> {
    let mut out: Vec<PortInfo> = serialport::available_ports()
        .unwrap_or_default()
        .into_iter()
        .map(|p| {
            let mut info = PortInfo {
                path: p.port_name.clone(),
                kind: "other".into(),
                vendor_id: None,
                product_id: None,
                manufacturer: None,
                product: None,
                serial_number: None,
                looks_like_dgt: name_looks_like_dgt(&p.port_name),
            };
            match p.port_type {
                SerialPortType::UsbPort(u) => {
                    info.kind = "usb".into();
                    info.vendor_id = Some(u.vid);
                    info.product_id = Some(u.pid);
                    info.looks_like_dgt |= u.vid == DGT_USB_VENDOR
                        || u.manufacturer.as_deref().is_some_and(name_looks_like_dgt)
                        || u.product.as_deref().is_some_and(name_looks_like_dgt);
                    info.manufacturer = u.manufacturer;
                    info.product = u.product;
                    info.serial_number = u.serial_number;
                }
                SerialPortType::BluetoothPort => info.kind = "bluetooth".into(),
                SerialPortType::PciPort => info.kind = "pci".into(),
                SerialPortType::Unknown => {}
            }
            info
        })
        .collect();
    for path in expand(extra) {
        if !out.iter().any(|p| p.path == path) {
            out.push(PortInfo {
                looks_like_dgt: name_looks_like_dgt(&path),
                path,
                kind: "other".into(),
                vendor_id: None,
                product_id: None,
                manufacturer: None,
                product: None,
                serial_number: None,
            });
        }
    }
    out
}

/// Expands `dir/*` style entries (a trailing `*` matches every file in the directory whose
/// name starts with what precedes it); other entries are taken as they are if they exist.
pub fn expand(patterns: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for p in patterns {
        if let Some(prefix) = p.strip_suffix('*') {
            let (dir, stem) = match prefix.rsplit_once('/') {
                Some((d, s)) => (
                    if d.is_empty() {
                        "/".to_string()
                    } else {
                        d.to_string()
                    },
                    s.to_string(),
                ),
                None => (".".to_string(), prefix.to_string()),
            };
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .flatten()
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(&stem))
                .map(|n| format!("{}/{n}", dir.trim_end_matches('/')))
                .collect();
            names.sort();
            out.extend(names);
        } else if std::path::Path::new(p).exists() {
            out.push(p.clone());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dgt_names() {
        assert!(name_looks_like_dgt("DGT_BT_12345"));
        assert!(name_looks_like_dgt("PCS-REVII-081500"));
        assert!(!name_looks_like_dgt("/dev/ttyS0"));
    }

    #[test]
    fn expand_globs_a_directory() {
        let dir = std::env::temp_dir().join(format!("relay-expand-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        for n in ["dgt-b", "dgt-a", "other"] {
            std::fs::write(dir.join(n), b"").expect("write");
        }
        let got = expand(&[format!("{}/dgt-*", dir.display())]);
        assert_eq!(
            got,
            vec![
                format!("{}/dgt-a", dir.display()),
                format!("{}/dgt-b", dir.display())
            ]
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
