// Relay's live boards on an organiser's own site. One script, included from the relay:
//
//   <script src="https://RELAY/embed/relay-board.js"></script>
//   <relay-board game="123"></relay-board>              one game, live
//   <relay-board round="7" theme="blue,dark"></relay-board>   a round's boards
//   <relay-board game="123" orientation="black"></relay-board>
//
// Each element holds a frame of the relay's embed page (embed/game.html or embed/round.html,
// from the origin this script came from), as wide as the element and as high as its content.
// The relay serves the embeds only into the sites its tournament lists (`embed_origins`).
// A page that wants to know when a board moves can listen for the frame's messages:
// {relay: 'embed', kind: 'game' | 'round', id, ply, height}.
//
// A plain script (no module), so it works in any page that can include one.

(() => {
  if (customElements.get('relay-board')) return;
  const script = /** @type {HTMLScriptElement | null} */ (document.currentScript);
  // The embed pages are this script's neighbours on the relay.
  const base = new URL('.', script && script.src ? script.src : location.href);

  class RelayBoard extends HTMLElement {
    static get observedAttributes() { return ['game', 'round', 'theme', 'orientation']; }

    constructor() {
      super();
      const shadow = this.attachShadow({ mode: 'open' });
      const style = document.createElement('style');
      style.textContent = `
        :host { display: block; width: 100%; max-width: var(--relay-board-max-width, 480px); }
        :host([round]) { max-width: none; }
        iframe { display: block; width: 100%; border: 0; height: var(--h); }
      `;
      this.frame = document.createElement('iframe');
      this.frame.setAttribute('loading', 'lazy');
      this.frame.setAttribute('title', 'Live chess board');
      shadow.append(style, this.frame);
      /** @param {MessageEvent} event */
      this.onFrameMessage = (event) => {
        const data = event.data;
        if (event.source !== this.frame.contentWindow || !data || data.relay !== 'embed') return;
        if (Number.isFinite(data.height) && data.height > 0) this.frame.style.setProperty('--h', `${data.height}px`);
      };
    }

    connectedCallback() {
      window.addEventListener('message', this.onFrameMessage);
      this.load();
    }

    disconnectedCallback() {
      window.removeEventListener('message', this.onFrameMessage);
    }

    attributeChangedCallback() {
      if (this.isConnected) this.load();
    }

    load() {
      const game = this.getAttribute('game');
      const round = this.getAttribute('round');
      const id = game || round;
      if (!id) return;
      const url = new URL(game ? 'game.html' : 'round.html', base);
      url.searchParams.set('id', id);
      for (const name of ['theme', 'orientation']) {
        const value = this.getAttribute(name);
        if (value) url.searchParams.set(name, value);
      }
      if (this.frame.src === url.href) return;
      // Until the page says how high it is: a game's board and its two name lines, or a
      // first row of a round's boards.
      this.frame.style.setProperty('--h', game ? 'calc(min(100vw, var(--relay-board-max-width, 480px)) * 1.12)' : '420px');
      this.frame.src = url.href;
    }
  }

  customElements.define('relay-board', RelayBoard);
})();
