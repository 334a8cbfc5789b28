export { Codes, SnowidError, isRetryable, type Code } from "./errors.js";
export {
  Layout,
  MAX_UNIX_MS,
  formatInstant,
  type ComposeParts,
  type Field,
  type FieldSpec,
  type LayoutCheck,
  type LayoutSpec,
  type Parts,
  type Role,
} from "./layout.js";
export { DISCORD, INSTAGRAM, SNOWID, SONYFLAKE, TWITTER, preset, presetNames } from "./presets.js";
export { LayoutHistory, type Era } from "./history.js";
export { formatId, idReviver, jsonReplacer, parseId, parseJsonWithIds, stringifyIds } from "./id-text.js";
export { mix64, shardOf } from "./shard.js";
export { systemClock, type Clock } from "./clock.js";
export { FileFenceStore, formatFence, parseFence, type FenceStore } from "./fence.js";
export { LeaseGuard } from "./lease-guard.js";
export { Generator, type GeneratorOptions, type GeneratorStats, type IdBatch } from "./generator.js";
export * from "./codec.js";
export { Sidecar, defaultSocketPath, errorOfReply, type SidecarOptions } from "./sidecar.js";
export { RespError, encodeCommand, readReply, type RespValue } from "./resp.js";
export {
  LeasedGenerator,
  type EtcdOptions,
  type LeaseEvent,
  type LeasedGeneratorOptions,
} from "./leased-generator.js";
