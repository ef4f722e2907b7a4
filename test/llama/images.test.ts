// Parley's own code against a real llama.cpp llama-server (issue 34): an image for a text-only model. The server's model
// list says the model takes none (single mode: its capabilities; router mode: architecture.input_modalities), and the
// panel's check refuses the image before anything is sent. A profile that says vision: true sends it: one request, not
// retried, and a card that says the model takes no images.
import * as assert from 'node:assert/strict';
import { listModelInfo } from '../../src/core/client';
import { errorView, IMAGES_HINT, imagesRefusal } from '../../src/core/errorView';
import { dataUrlHead, sniffImage } from '../../src/core/images';
import { listedModel } from '../../src/core/modelInfo';
import type { ImageView } from '../../src/shared/protocol';
import { Panel, panelWindow } from './panel';
import { clientOptions, countingProxy, llamaServers } from './support';

/** A 1x1 PNG. */
const PNG: ImageView = { name: 'dot.png', dataUrl: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==' };

describe('Parley against llama-server: an image for a text-only model', function () {
  this.timeout(60_000);

  it('single mode: the list says no images, the image is refused before sending; with vision: true one request and the card', async () => {
    const { single, key } = llamaServers();
    const proxy = await countingProxy(single);
    try {
      const opts = clientOptions(proxy.url, key);
      assert.equal(sniffImage(dataUrlHead(PNG.dataUrl)), 'image/png');
      const list = await listModelInfo(opts);
      assert.equal(listedModel(list, 'tiny')?.imageInput, false);
      // ChatController.send: the images are checked, then imagesRefused (no profile setting: the list decides).
      const refused = imagesRefusal('tiny', undefined, listedModel(list, 'tiny')?.imageInput);
      assert.equal(refused, `tiny does not take images: the server lists it as text-only. ${IMAGES_HINT}`);
      assert.equal(proxy.count('POST', '/v1/chat/completions'), 0, 'nothing sent');
      assert.equal(imagesRefusal('tiny', { name: 'Local', vision: false }, undefined), 'tiny does not take images (vision is off for it in the profile "Local").');

      // A profile's vision: true wins over the list: the image goes, and the server's 500 is final.
      assert.equal(imagesRefusal('tiny', { name: 'Local', vision: true }, false), undefined);
      const panel = new Panel(opts, 'tiny', await panelWindow(opts, 'tiny'));
      const r = await panel.ask('What is in this picture?', [PNG]);
      const err = r?.error;
      assert.ok(r?.ended === 'error' && err, `ended ${r?.ended}`);
      assert.equal(err.kind, 'no_image_input', err.message);
      assert.equal(proxy.count('POST', '/v1/chat/completions'), 1, 'one request: not retried');
      const card = errorView(err, { model: 'tiny', url: opts.endpoint.url });
      assert.equal(card.title, 'The model "tiny" takes no images (HTTP 500). Switch to a model that takes images, or start a new chat without the image.');
      assert.equal(card.hint, IMAGES_HINT);
      assert.deepEqual(card.actions, ['switchEndpoint', 'retry']);
    } finally {
      await proxy.close();
    }
  });

  it('router mode: input_modalities ["text"] says no images for each model, before any is loaded', async () => {
    const { router, key } = llamaServers();
    const list = await listModelInfo(clientOptions(router, key));
    for (const model of ['tiny-a', 'tiny-b']) {
      assert.equal(listedModel(list, model)?.imageInput, false, model);
      assert.match(imagesRefusal(model, undefined, listedModel(list, model)?.imageInput) ?? '', new RegExp(`^${model} does not take images: the server lists it as text-only`));
    }
  });
});
