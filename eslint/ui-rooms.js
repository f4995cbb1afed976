// The rooms of src/ui and which may import which (the lint rule `tabrl/ui-rooms`; docs/architecture.md,
// "Inside the UI"). Only relative imports that land in src/ui are judged; the layering rules in
// eslint.config.js judge the rest.
//
//   app/                 the shell (App, main, top bar, start-up): may import anything in src/ui; nothing imports it
//   features/<name>/     one feature: its actions, panels and slice; may import kit/, store/, any feature's
//                        slice file, and the features listed before it in UI_FEATURES (never one after it)
//   store/ + *-slice.ts  the one store: the composition (store/) and each feature's slice file; imports only
//                        store/, other slices and kit/, plus types (`import type`) from anywhere
//   kit/                 shared widgets and helpers (settings rows, charts and their palette, ...): imports only kit/
import { dirname, relative, resolve, sep } from 'node:path';

/** The features, lowest first: a feature may import the ones before it, never one after it. */
export const UI_FEATURES = ['environment', 'models', 'judge', 'jobs', 'training', 'runs', 'chat', 'policy', 'evaluation', 'studio', 'share', 'transfer', 'lessons'];

const UI_ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..', 'src', 'ui');

/** The room of a file under src/ui: { kind: 'app' | 'kit' | 'store' | 'feature' | 'other', feature?, slice }. */
export function uiRoom(file) {
  const parts = relative(UI_ROOT, file).split(sep);
  const slice = /-slice\.ts$/.test(parts[parts.length - 1] ?? '');
  if (parts[0] === 'features' && parts.length >= 3) return { kind: 'feature', feature: parts[1], slice };
  if (parts.length >= 2 && (parts[0] === 'app' || parts[0] === 'kit' || parts[0] === 'store')) return { kind: parts[0], slice: false };
  return { kind: 'other', slice };
}

/** Why `from` may not import `to` (both rooms), or null when it may. */
function refusal(from, to, typeOnly) {
  if (to.kind === 'other') return 'src/ui keeps its files in app/, kit/, store/ and features/<name>/: move the imported file into one of them';
  if (from.kind === 'app') return null;
  if (to.kind === 'app') return 'nothing below src/ui/app imports it: the app imports the features, never the other way round';
  if (from.kind === 'kit') return to.kind === 'kit' ? null : 'src/ui/kit holds shared widgets that know no feature and no store: pass what the widget needs as props';
  const toStore = to.kind === 'store' || to.slice;
  if (from.kind === 'store' || from.slice) {
    if (toStore || to.kind === 'kit' || typeOnly) return null;
    return "the store (store/ and each feature's *-slice.ts) imports only the store, other slices and the kit; take types with `import type`";
  }
  // from is a feature's module
  if (!UI_FEATURES.includes(from.feature)) return `features/${from.feature} is not listed in UI_FEATURES (eslint/ui-rooms.js): add it where it belongs in the order`;
  if (toStore || to.kind === 'kit' || to.feature === from.feature) return null;
  if (!UI_FEATURES.includes(to.feature)) return `features/${to.feature} is not listed in UI_FEATURES (eslint/ui-rooms.js)`;
  if (UI_FEATURES.indexOf(to.feature) < UI_FEATURES.indexOf(from.feature)) return null;
  return `features/${from.feature} may not import features/${to.feature}, which comes after it in UI_FEATURES (eslint/ui-rooms.js): move the shared piece down (into kit/, the store or an earlier feature), or let the app pass it in`;
}

/** The rule: each relative import from a file under src/ui into src/ui is checked against its room. */
const uiRoomsRule = {
  meta: { type: 'problem', docs: { description: "src/ui's rooms import one way: app → features (in order) → store and slices → kit" }, schema: [], messages: { refused: '{{why}}' } },
  create(context) {
    const file = context.filename;
    if (!file.startsWith(UI_ROOT + sep)) return {};
    const from = uiRoom(file);
    if (from.kind === 'other') return {};
    const check = (node, source, typeOnly) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = resolve(dirname(file), source.replace(/\?.*$/, ''));
      if (!target.startsWith(UI_ROOT + sep)) return;
      const why = refusal(from, uiRoom(target), typeOnly);
      if (why) context.report({ node, messageId: 'refused', data: { why } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value, node.importKind === 'type' || (node.specifiers.length > 0 && node.specifiers.every((s) => s.importKind === 'type'))),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => check(node, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value, false),
    };
  },
};

/** The plugin that carries the rule, as eslint.config.js registers it. */
export const uiRoomsPlugin = { rules: { 'ui-rooms': uiRoomsRule } };
