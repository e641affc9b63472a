/**
 * Ailoy 0.1's `NDArray`: a typed array with its shape, what Ailoy's runtime gives for an
 * array value (`rt.callMethod("em0", "infer", {prompt})` → `{embedding: NDArray}` on a
 * `tvm_embedding_model`). ferrule's wire is JSON, which has no array type, so the Runtime
 * makes one where Ailoy's protocol has one (`ndarrayOutputs`); sent back in a request, an
 * NDArray is its list of numbers.
 */

import { InvalidInputError } from "./errors.js";

export type NDArrayDtype =
  | "uint8"
  | "uint16"
  | "uint32"
  | "uint64"
  | "int8"
  | "int16"
  | "int32"
  | "int64"
  | "float32"
  | "float64";

export type NDArrayData =
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Float32Array
  | Float64Array;

const DTYPES: Record<NDArrayDtype, string> = {
  uint8: "Uint8Array",
  uint16: "Uint16Array",
  uint32: "Uint32Array",
  uint64: "BigUint64Array",
  int8: "Int8Array",
  int16: "Int16Array",
  int32: "Int32Array",
  int64: "BigInt64Array",
  float32: "Float32Array",
  float64: "Float64Array",
};

export class NDArray {
  readonly shape: number[];
  readonly dtype: NDArrayDtype;
  readonly data: NDArrayData;

  constructor(arg: { shape: number[]; dtype: NDArrayDtype; data: NDArrayData }) {
    const { shape, dtype, data } = arg ?? ({} as typeof arg);
    if (!Array.isArray(shape) || !shape.every((n) => Number.isInteger(n) && n >= 0)) {
      throw InvalidInputError.forField("must be a list of non-negative integers", "shape");
    }
    if (!(dtype in DTYPES)) {
      throw InvalidInputError.forField(`must be one of ${Object.keys(DTYPES).join(", ")}`, "dtype");
    }
    if (data?.constructor?.name !== DTYPES[dtype]) {
      throw InvalidInputError.forField(`must be a ${DTYPES[dtype]} for dtype ${dtype}`, "data");
    }
    const size = shape.reduce((a, b) => a * b, 1);
    if (data.length !== size) {
      throw InvalidInputError.forField(`has ${data.length} values, shape [${shape}] holds ${size}`, "data");
    }
    this.shape = [...shape];
    this.dtype = dtype;
    this.data = data;
  }

  /** A one-dimensional float32 array of `values`. */
  static float32(values: number[]): NDArray {
    return new NDArray({ shape: [values.length], dtype: "float32", data: Float32Array.from(values) });
  }

  getShape(): number[] {
    return [...this.shape];
  }

  getDtype(): NDArrayDtype {
    return this.dtype;
  }

  getData(): NDArrayData {
    return this.data;
  }

  /** In a request, an NDArray is its values, as a list. */
  toJSON(): number[] {
    return Array.from(this.data as ArrayLike<number | bigint>, Number);
  }
}

/** Where Ailoy 0.1's protocol answers an NDArray: component type → method → fields. */
export const ndarrayOutputs: Record<string, Record<string, string[]>> = {
  tvm_embedding_model: { infer: ["embedding"] },
  faiss_vector_store: { get_by_id: ["embedding"] },
  chromadb_vector_store: { get_by_id: ["embedding"] },
};
