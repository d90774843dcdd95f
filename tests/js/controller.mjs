// A small controller written as a JavaScript user would, with @kubernetes/client-node 1.x, run
// against the kubeconfig `lifecycle-tck serve` writes (tests/test_js_client.py runs it).
// It prints one JSON line per check: {"check": name, "ok": bool, "detail": ...}.
// Every wait is bounded so a server that never answers fails the check instead of hanging.
import * as k8s from '@kubernetes/client-node';

const STEP_TIMEOUT_MS = 15000;
const NAMESPACE = `js-client-${process.pid}`;

const kc = new k8s.KubeConfig();
kc.loadFromDefault(); // KUBECONFIG, as any client-node user starts
const core = kc.makeApiClient(k8s.CoreV1Api);

function report(check, ok, detail) {
  process.stdout.write(JSON.stringify({ check, ok, detail }) + '\n');
}

function describe(err) {
  if (err && err.body !== undefined) {
    return `HTTP ${err.code}: ${typeof err.body === 'string' ? err.body : JSON.stringify(err.body)}`;
  }
  return String(err && err.stack ? err.stack : err);
}

async function check(name, body) {
  try {
    const detail = await body();
    report(name, true, detail ?? null);
  } catch (err) {
    report(name, false, describe(err));
  }
}

// Resolves once predicate() is true, rejecting after STEP_TIMEOUT_MS.
function until(what, predicate) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      if (predicate()) return resolve();
      if (Date.now() - started > STEP_TIMEOUT_MS) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 50);
    };
    poll();
  });
}

function header(name, value) {
  return k8s.setHeaderOptions(name, value);
}

function configMap(name, data, labels = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NAMESPACE, labels }, data };
}

async function main() {
  await core.createNamespace({ body: { metadata: { name: NAMESPACE } } });

  await check('list', async () => {
    const namespaces = await core.listNamespace();
    const names = namespaces.items.map((n) => n.metadata.name);
    if (!names.includes('default') || !names.includes(NAMESPACE)) throw new Error(`namespaces: ${names}`);
    const nodes = await core.listNode();
    if (nodes.items.length < 1) throw new Error('no Node listed');
    return { namespaces: names.length, nodes: nodes.items.length };
  });

  await check('watch', async () => {
    const seen = [];
    const watch = new k8s.Watch(kc);
    let ended = null;
    const controller = await watch.watch(`/api/v1/namespaces/${NAMESPACE}/configmaps`, {},
      (phase, obj) => seen.push(`${phase} ${obj.metadata.name}`),
      (err) => { ended = err ?? 'closed'; });
    try {
      await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap('watched', { a: '1' }) });
      await until('the ADDED event', () => seen.includes('ADDED watched') || ended !== null);
      if (!seen.includes('ADDED watched')) throw new Error(`watch ended: ${ended}; seen ${seen}`);
      return { events: seen };
    } finally {
      controller.abort();
    }
  });

  await check('informer', async () => {
    const events = [];
    const errors = [];
    const path = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
    const informer = k8s.makeInformer(kc, path,
      () => core.listNamespacedConfigMap({ namespace: NAMESPACE, labelSelector: 'app=informed' }), 'app=informed');
    informer.on('add', (o) => events.push(`add ${o.metadata.name}`));
    informer.on('update', (o) => events.push(`update ${o.metadata.name} ${o.data.step}`));
    informer.on('delete', (o) => events.push(`delete ${o.metadata.name}`));
    informer.on('error', (err) => errors.push(describe(err)));
    await informer.start();
    try {
      await core.createNamespacedConfigMap({ namespace: NAMESPACE,
        body: configMap('informed', { step: '1' }, { app: 'informed' }) });
      await until('the add event', () => events.includes('add informed'));
      await core.replaceNamespacedConfigMap({ name: 'informed', namespace: NAMESPACE,
        body: configMap('informed', { step: '2' }, { app: 'informed' }) });
      await until('the update event', () => events.includes('update informed 2'));
      await core.deleteNamespacedConfigMap({ name: 'informed', namespace: NAMESPACE });
      await until('the delete event', () => events.includes('delete informed'));
      if (informer.get('informed', NAMESPACE) !== undefined) throw new Error('deleted object still cached');
      // Errors before stop() are the server's; stop() itself aborts the watch and reports that too.
      if (errors.length > 0) throw new Error(`informer errors: ${errors}`);
      return { events: [...events] };
    } finally {
      await informer.stop();
    }
  });

  await core.createNamespacedConfigMap({ namespace: NAMESPACE, body: configMap('patched', { a: '1' }) });

  await check('json-patch', async () => {
    const out = await core.patchNamespacedConfigMap({ name: 'patched', namespace: NAMESPACE,
      body: [{ op: 'add', path: '/data/b', value: '2' }] }, header('Content-Type', k8s.PatchStrategy.JsonPatch));
    if (out.data.b !== '2' || out.data.a !== '1') throw new Error(JSON.stringify(out.data));
    return out.data;
  });

  await check('merge-patch', async () => {
    const out = await core.patchNamespacedConfigMap({ name: 'patched', namespace: NAMESPACE,
      body: { data: { a: null, c: '3' } } }, header('Content-Type', k8s.PatchStrategy.MergePatch));
    if ('a' in out.data || out.data.c !== '3') throw new Error(JSON.stringify(out.data));
    return out.data;
  });

  await check('strategic-merge-patch', async () => {
    // A Pod's containers merge by name under a strategic merge patch (a merge patch would replace the list).
    await core.createNamespacedPod({ namespace: NAMESPACE, body: { metadata: { name: 'smp' },
      spec: { containers: [{ name: 'app', image: 'app:1' }, { name: 'sidecar', image: 'sidecar:1' }] } } });
    const out = await core.patchNamespacedPod({ name: 'smp', namespace: NAMESPACE,
      body: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } },
    header('Content-Type', k8s.PatchStrategy.StrategicMergePatch));
    const images = out.spec.containers.map((c) => `${c.name}=${c.image}`);
    if (images.join(',') !== 'app=app:2,sidecar=sidecar:1') throw new Error(images.join(','));
    return { images };
  });

  await check('server-side-apply', async () => {
    const applied = (manager, data, force) => core.patchNamespacedConfigMap({ name: 'applied',
      namespace: NAMESPACE, body: configMap('applied', data), fieldManager: manager, force },
    header('Content-Type', k8s.PatchStrategy.ServerSideApply));
    await applied('js-controller', { owned: 'mine' }, undefined);
    let conflict = null;
    try {
      await applied('js-other', { owned: 'theirs' }, undefined);
    } catch (err) {
      conflict = err.code;
    }
    if (conflict !== 409) throw new Error(`expected a 409 conflict, got ${conflict}`);
    const out = await applied('js-other', { owned: 'theirs' }, true);
    const managers = (out.metadata.managedFields || []).map((m) => `${m.manager}/${m.operation}`);
    if (out.data.owned !== 'theirs' || !managers.includes('js-other/Apply')) {
      throw new Error(`${JSON.stringify(out.data)} managed by ${managers}`);
    }
    return { data: out.data, managers, conflict };
  });

  await check('eviction', async () => {
    await core.createNamespacedPod({ namespace: NAMESPACE, body: { metadata: { name: 'evicted' },
      spec: { containers: [{ name: 'app', image: 'app:1' }], terminationGracePeriodSeconds: 0 } } });
    const answer = await core.createNamespacedPodEviction({ name: 'evicted', namespace: NAMESPACE, body: {
      apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'evicted', namespace: NAMESPACE } } });
    let gone = false;
    let terminating = false;
    try {
      const pod = await core.readNamespacedPod({ name: 'evicted', namespace: NAMESPACE });
      terminating = Boolean(pod.metadata.deletionTimestamp);
    } catch (err) {
      if (err.code !== 404) throw err;
      gone = true;
    }
    if (!gone && !terminating) throw new Error('the evicted Pod is neither gone nor terminating');
    return { answer: answer && answer.kind, gone, terminating };
  });

  await core.deleteNamespace({ name: NAMESPACE });
}

const deadline = setTimeout(() => {
  report('deadline', false, 'the script did not finish in time');
  process.exit(2);
}, 8 * STEP_TIMEOUT_MS);

main().then(() => {
  clearTimeout(deadline);
  process.exit(0);
}, (err) => {
  report('setup', false, describe(err));
  process.exit(1);
});
