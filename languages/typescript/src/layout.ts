/**
 * Bit layouts (docs/id-format.md sections 1-6, 9): validation, compose and decode, time
 * bounds. Ids are unsigned 64-bit integers held as `bigint`; tick counts and Unix
 * milliseconds are `number` (every layout ends before Unix ms 9,223,372,036,854 < 2^53).
 */
import { invalid, outOfRange, SnowidError } from "./errors.js";

export type Role = "time" | "region" | "host" | "sequence" | "other";
const ROLES: readonly string[] = ["time", "region", "host", "sequence", "other"];

export interface FieldSpec {
  readonly name: string;
  readonly role: Role | string;
  readonly width: number;
}

export interface LayoutSpec {
  readonly name?: string;
  readonly epochMs: number;
  readonly unitMs?: number;
  readonly decodeOnly?: boolean;
  readonly fields: readonly FieldSpec[];
}

export interface Field {
  readonly name: string;
  readonly role: Role;
  readonly width: number;
  /** Position of the field's lowest bit. */
  readonly shift: number;
}

/** What an id says, by the layout that decoded it. */
export interface Parts {
  readonly id: bigint;
  /** The time field: ticks since the epoch. */
  readonly ticks: number;
  /** Start of the id's tick, Unix milliseconds. */
  readonly unixMs: number;
  readonly time: Date;
  /** 0 when the layout has no field of that role. */
  readonly region: number;
  readonly host: number;
  readonly sequence: number;
  /** Every field of the layout by name. */
  readonly fields: Readonly<Record<string, bigint>>;
}

/** What compose() takes for a layout without `other` fields. */
export interface ComposeParts {
  readonly ticks: number;
  readonly region?: number;
  readonly host?: number;
  readonly sequence?: number;
}

export type LayoutCheck =
  | { readonly outcome: "ok"; readonly yearsRemaining: number }
  | { readonly outcome: "end_of_life_warning"; readonly yearsRemaining: number; readonly warning: string };

/** The last millisecond that signed 64-bit nanoseconds since 1970 can hold. */
export const MAX_UNIX_MS = 9_223_372_036_854;
const MS_PER_YEAR = 365.2425 * 86_400_000;
const NAME = /^[a-z0-9_]{1,32}$/;

function mask(width: number): bigint {
  return (1n << BigInt(width)) - 1n;
}

export function formatInstant(unixMs: number): string {
  return new Date(unixMs).toISOString();
}

export class Layout {
  readonly name: string;
  readonly epochMs: number;
  readonly unitMs: number;
  readonly decodeOnly: boolean;
  readonly fields: readonly Field[];
  readonly totalWidth: number;
  readonly maxId: bigint;
  readonly maxTicks: number;
  readonly endOfLifeMs: number;
  readonly timeShift: number;
  private readonly byRole: Readonly<Partial<Record<Role, Field>>>;

  /** Validates `spec` by the rules of docs/id-format.md section 5, in their order. */
  constructor(spec: LayoutSpec) {
    const unit = spec.unitMs ?? 1;
    const epoch = spec.epochMs;
    if (unit !== 1 && unit !== 10) throw invalid(`unit must be 1 or 10 ms, not ${unit}`);
    if (!Number.isSafeInteger(epoch) || epoch < 0 || epoch >= MAX_UNIX_MS) {
      throw invalid(`epoch must be from 1970 to before 2262-04-11, not ${epoch} ms`);
    }
    const specs = spec.fields;
    if (specs.length < 1 || specs.length > 8) {
      throw invalid(`a layout has 1 to 8 fields, not ${specs.length}`);
    }
    const names = new Set<string>();
    const roles = new Set<string>();
    let total = 0;
    for (const f of specs) {
      if (typeof f.name !== "string" || !NAME.test(f.name)) {
        throw invalid(`field name "${f.name}" must be 1 to 32 characters of a-z, 0-9 and _`);
      }
      if (names.has(f.name)) throw invalid(`field name "${f.name}" is used twice`);
      names.add(f.name);
      if (!Number.isInteger(f.width) || f.width < 1 || f.width > 64) {
        throw invalid(`field ${f.name} must be 1 to 64 bits wide, not ${f.width}`);
      }
      if (!ROLES.includes(f.role)) throw invalid(`field ${f.name} has an unknown role "${f.role}"`);
      if (f.role !== "other" && roles.has(f.role)) {
        throw invalid(`more than one field has the role ${f.role}`);
      }
      roles.add(f.role);
      total += f.width;
    }
    if (total > 64) throw invalid(`the fields add up to ${total} bits, more than 64`);
    const first = specs[0]!;
    if (first.role !== "time") throw invalid("the most significant field must have the role time");
    const eol = BigInt(epoch) + (1n << BigInt(first.width)) * BigInt(unit);
    if (first.width > 61 || eol > BigInt(MAX_UNIX_MS)) {
      throw invalid(
        `the time field of ${first.width} bits ends after 2262-04-11 (the end of 64-bit nanosecond time)`,
      );
    }
    const decodeOnly = spec.decodeOnly ?? false;
    if (!decodeOnly) {
      const order = specs.map((f) => f.role).join(",");
      if (!/^time(,region)?(,host)?,sequence$/.test(order) || total !== 63) {
        throw invalid(
          "a layout to generate with has the fields time, [region], [host], sequence in that order and 63 bits in all",
        );
      }
    }
    for (const f of specs) {
      // A limit of this library, not of the format: role values are plain numbers here.
      if (f.role !== "other" && f.role !== "time" && f.width > 53) {
        throw invalid(`field ${f.name}: a ${f.role} field wider than 53 bits is not supported`);
      }
    }
    let shift = total;
    const fields: Field[] = specs.map((f) => {
      shift -= f.width;
      return { name: f.name, role: f.role as Role, width: f.width, shift };
    });
    this.name = spec.name === undefined || spec.name === "" ? "custom" : spec.name;
    this.epochMs = epoch;
    this.unitMs = unit;
    this.decodeOnly = decodeOnly;
    this.fields = Object.freeze(fields);
    this.totalWidth = total;
    this.maxId = mask(total);
    this.maxTicks = Number(mask(first.width));
    this.endOfLifeMs = Number(eol);
    this.timeShift = fields[0]!.shift;
    const byRole: Partial<Record<Role, Field>> = {};
    for (const f of fields) if (f.role !== "other") byRole[f.role] = f;
    this.byRole = Object.freeze(byRole);
  }

  get canGenerate(): boolean {
    return !this.decodeOnly;
  }

  field(role: Role): Field | undefined {
    return this.byRole[role];
  }

  widthOf(role: Role): number {
    return this.byRole[role]?.width ?? 0;
  }

  shiftOf(role: Role): number {
    return this.byRole[role]?.shift ?? 0;
  }

  get regions(): number {
    return 2 ** this.widthOf("region");
  }

  get workersPerRegion(): number {
    return 2 ** this.widthOf("host");
  }

  get sequenceCapacity(): number {
    return 2 ** this.widthOf("sequence");
  }

  /** The tick containing `unixMs` (a floor division; negative before the epoch). */
  ticksAt(unixMs: number): number {
    return Math.floor((unixMs - this.epochMs) / this.unitMs);
  }

  tickStartMs(ticks: number): number {
    return this.epochMs + ticks * this.unitMs;
  }

  decode(id: bigint): Parts {
    if (typeof id !== "bigint") throw invalid("an id is a bigint");
    if (id < 0n || id > this.maxId) {
      throw outOfRange(`id ${id} does not fit the ${this.totalWidth} bits of layout ${this.name}`);
    }
    const values: Record<string, bigint> = {};
    for (const f of this.fields) values[f.name] = (id >> BigInt(f.shift)) & mask(f.width);
    const role = (r: Role): number => {
      const f = this.byRole[r];
      return f === undefined ? 0 : Number(values[f.name]);
    };
    const ticks = role("time");
    const unixMs = this.tickStartMs(ticks);
    return {
      id,
      ticks,
      unixMs,
      time: new Date(unixMs),
      region: role("region"),
      host: role("host"),
      sequence: role("sequence"),
      fields: Object.freeze(values),
    };
  }

  /** Composes an id from every field's value by name; a value that does not fit is OUT_OF_RANGE. */
  encode(values: Readonly<Record<string, bigint | number>>): bigint {
    let id = 0n;
    for (const f of this.fields) {
      const raw = values[f.name];
      if (raw === undefined) throw invalid(`field ${f.name} has no value`);
      if (typeof raw === "number" && !Number.isSafeInteger(raw)) {
        throw invalid(`field ${f.name}: ${raw} is not an exact integer`);
      }
      const v = BigInt(raw);
      if (v < 0n || v > mask(f.width)) {
        throw outOfRange(`field ${f.name}: ${v} does not fit ${f.width} bits`);
      }
      id |= v << BigInt(f.shift);
    }
    return id;
  }

  /** Composes from the roles; a layout with `other` fields needs encode(). */
  compose(parts: ComposeParts): bigint {
    if (this.fields.some((f) => f.role === "other")) {
      throw invalid(`layout ${this.name} has fields without a role: use encode()`);
    }
    const values: Record<string, number> = {};
    for (const f of this.fields) {
      const v = f.role === "time" ? parts.ticks : (parts[f.role as "region" | "host" | "sequence"] ?? 0);
      values[f.name] = v;
    }
    for (const r of ["region", "host"] as const) {
      if (this.byRole[r] === undefined && (parts[r] ?? 0) !== 0) {
        throw outOfRange(`layout ${this.name} has no ${r} field: ${r} must be 0`);
      }
    }
    return this.encode(values);
  }

  /** The smallest id of the tick containing `unixMs` (section 9). */
  minId(unixMs: number): bigint {
    const t = this.ticksAt(unixMs);
    if (!Number.isFinite(t) || t < 0 || t > this.maxTicks) {
      throw outOfRange(`${formatInstant(unixMs)} is outside the lifetime of layout ${this.name}`);
    }
    return BigInt(t) << BigInt(this.timeShift);
  }

  /** The largest id of the tick containing `unixMs`. */
  maxIdAt(unixMs: number): bigint {
    return this.minId(unixMs) | mask(this.timeShift);
  }

  /** The checks against the current time of section 5. */
  check(nowMs: number): LayoutCheck {
    if (this.epochMs > nowMs) {
      throw invalid(`the epoch of layout ${this.name} (${formatInstant(this.epochMs)}) is in the future`);
    }
    if (nowMs >= this.endOfLifeMs) {
      throw outOfRange(`layout ${this.name} reached its end of life at ${formatInstant(this.endOfLifeMs)}`);
    }
    const years = (this.endOfLifeMs - nowMs) / MS_PER_YEAR;
    if (years < 10) {
      return {
        outcome: "end_of_life_warning",
        yearsRemaining: years,
        warning: `layout ${this.name} ends at ${formatInstant(this.endOfLifeMs)}, in ${years.toFixed(2)} years`,
      };
    }
    return { outcome: "ok", yearsRemaining: years };
  }

  /** Throws unless the worker fits this layout's region and host fields. */
  checkWorker(region: number, host: number): void {
    if (!Number.isInteger(region) || region < 0 || region >= this.regions) {
      throw invalid(`region must be 0..${this.regions - 1} (layout ${this.name}), not ${region}`);
    }
    if (!Number.isInteger(host) || host < 0 || host >= this.workersPerRegion) {
      throw invalid(`host must be 0..${this.workersPerRegion - 1} (layout ${this.name}), not ${host}`);
    }
  }
}

export function isSnowidError(e: unknown): e is SnowidError {
  return e instanceof SnowidError;
}
