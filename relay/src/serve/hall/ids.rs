//! Which e-board a serial number on a port is: the serial itself, or `serial@port` for a
//! second connected board reporting the same serial (both games are recorded apart).

use super::state::Hall;

/// A port as a short name that can stand in an e-board id and a URL: its file name
/// (`/dev/ttyUSB1` → `ttyUSB1`, `COM3`), with the directory's when the name is a bare number
/// (`/dev/pts/3` → `pts-3`).
fn port_tag(port: &str) -> String {
    let path = std::path::Path::new(port);
    let name = path
        .file_name()
        .map_or_else(|| port.to_string(), |n| n.to_string_lossy().to_string());
    let name = match path.parent().and_then(|p| p.file_name()) {
        Some(dir) if name.chars().all(|c| c.is_ascii_digit()) => {
            format!("{}-{name}", dir.to_string_lossy())
        }
        _ => name,
    };
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

impl Hall {
    /// The e-board id of `serial` as reported on `port`. Serial numbers are unique in
    /// principle, but a repaired board, a clone or a misconfigured Bluetooth adapter can repeat
    /// one: a second connected board with the same serial gets `serial@port` (the same id
    /// after a restart, so its stored game is carried on), both games are recorded, and the
    /// log and the console say so, naming the ports.
    pub(super) fn id_of(&mut self, serial: &str, port: &str) -> String {
        if let Some(id) = self.mapped(serial, port) {
            return id.clone();
        }
        let second = format!("{serial}@{}", port_tag(port));
        let id = if self.desks.contains(&second) || self.resume.contains_key(&second) {
            second
        } else {
            match self.desks.get(serial) {
                Some(d) if d.port != port && d.view.connected => second,
                _ => serial.to_string(),
            }
        };
        if id != serial {
            let first_port = self
                .desks
                .get(serial)
                .map_or_else(|| "another port".to_string(), |d| d.port.clone());
            tracing::warn!(
                %serial,
                first = %first_port,
                second = %port,
                id = %id,
                "two e-boards report the same serial number; both are recorded, the second as {id}"
            );
            let text = format!(
                "serial {serial} is reported by two e-boards: on {first_port} and on {port} \
                 (recorded as {id})"
            );
            self.map_id(serial, port, &id);
            self.desk(&id, port).view.warning = Some(text.clone());
            self.announce(&id);
            if let Some(d) = self.desks.get_mut(serial) {
                d.view.warning = Some(text);
                self.announce(serial);
            }
            return id;
        }
        self.map_id(serial, port, &id);
        id
    }

    pub(super) fn mapped(&self, serial: &str, port: &str) -> Option<&String> {
        self.ids.get(port, serial)
    }

    pub(super) fn map_id(&mut self, serial: &str, port: &str, id: &str) {
        self.ids.set(port, serial, id);
    }

    /// The e-board id of an event that names a serial (one already mapped, or the serial).
    pub(super) fn known_id(&self, serial: &str, port: &str) -> String {
        self.mapped(serial, port)
            .cloned()
            .unwrap_or_else(|| serial.to_string())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn port_tags_are_short_and_url_safe() {
        assert_eq!(super::port_tag("/dev/ttyUSB1"), "ttyUSB1");
        assert_eq!(super::port_tag("/dev/pts/3"), "pts-3");
        assert_eq!(super::port_tag("COM3"), "COM3");
        assert_eq!(super::port_tag("/tmp/links/dgt 2"), "dgt-2");
    }
}
