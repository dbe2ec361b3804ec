#!/usr/bin/env python3
"""Writes the seed corpus of the `import` fuzz target: small valid and broken
.gltf/.glb files, generated here (no asset is shipped).

    python3 scripts/make_fuzz_corpus.py [OUT_DIR]    (default: fuzz/corpus/import)

Valid seeds cover every interpolation x target path, normalized integer
rotations and weights, a sparse output, a shared input, a single-key
sampler, a morph mesh and KHR_animation_pointer channels (material factors,
texture transforms, node properties, a light and a camera, next to core
channels), in both containers (.gltf with a base64 data URI, .glb). Broken seeds each break one rule (truncated or inconsistent GLB,
JSON that is not glTF, ranges past their buffer, bad strides, overflowing
counts, out-of-range indices, bad times and values, bad CUBICSPLINE counts,
weights counts, unknown strings, required extensions, bad URIs, absurd
declared sizes, a pointer that does not resolve, a pointer channel without
its extension object, one property animated twice), so that the fuzzer
starts next to every error path.
The output folder is gitignored; the script is deterministic.
"""

import base64
import copy
import json
import math
import os
import struct
import sys

FLOAT, BYTE, UBYTE, SHORT, USHORT, UINT = 5126, 5120, 5121, 5122, 5123, 5125


def f32(values):
    return b"".join(struct.pack("<f", v) for v in values)


class Asset:
    """A glTF document under construction: JSON plus one binary buffer."""

    def __init__(self):
        self.bin = bytearray()
        self.doc = {
            "asset": {"version": "2.0", "generator": "make_fuzz_corpus.py"},
            "buffers": [],
            "bufferViews": [],
            "accessors": [],
            "nodes": [],
            "meshes": [],
            "animations": [],
        }

    def view(self, data, stride=None):
        while len(self.bin) % 4:
            self.bin.append(0)
        v = {"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)}
        if stride is not None:
            v["byteStride"] = stride
        self.bin += data
        self.doc["bufferViews"].append(v)
        return len(self.doc["bufferViews"]) - 1

    def accessor(self, data, ctype, count, type_, normalized=False, **extra):
        a = {"bufferView": self.view(data), "componentType": ctype, "count": count, "type": type_}
        if normalized:
            a["normalized"] = True
        a.update(extra)
        self.doc["accessors"].append(a)
        return len(self.doc["accessors"]) - 1

    def floats(self, values, type_):
        n = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4}[type_]
        extra = {}
        if type_ == "SCALAR":
            extra = {"min": [min(values)], "max": [max(values)]}
        return self.accessor(f32(values), FLOAT, len(values) // n, type_, **extra)

    def node(self, mesh=None):
        self.doc["nodes"].append({} if mesh is None else {"mesh": mesh})
        return len(self.doc["nodes"]) - 1

    def morph_mesh(self, targets):
        pos = self.floats([0, 0, 0, 1, 0, 0, 0, 1, 0], "VEC3")
        self.doc["meshes"].append(
            {
                "primitives": [
                    {"attributes": {"POSITION": pos}, "targets": [{"POSITION": pos}] * targets}
                ],
                "weights": [0.0] * targets,
            }
        )
        return len(self.doc["meshes"]) - 1

    def animation(self, samplers, channels, name="anim"):
        self.doc["animations"].append(
            {
                "name": name,
                "samplers": [{"input": i, "output": o, "interpolation": m} for i, o, m in samplers],
                "channels": [{"sampler": s, "target": {"node": n, "path": p}} for s, n, p in channels],
            }
        )

    def json_doc(self, uri):
        doc = copy.deepcopy(self.doc)
        buf = {"byteLength": len(self.bin)}
        if uri is not None:
            buf["uri"] = uri
        doc["buffers"] = [buf]
        doc["scenes"] = [{"nodes": list(range(len(doc["nodes"])))}]
        doc["scene"] = 0
        return doc

    def gltf(self, doc=None):
        if doc is None:
            doc = self.json_doc("data:application/octet-stream;base64," + base64.b64encode(bytes(self.bin)).decode())
        return json.dumps(doc, separators=(",", ":")).encode()

    def glb(self, doc=None, bin_=None):
        if doc is None:
            doc = self.json_doc(None)
        return glb(json.dumps(doc, separators=(",", ":")).encode(), bytes(self.bin) if bin_ is None else bin_)


def glb(json_bytes, bin_bytes=None, version=2, total=None):
    j = json_bytes + b" " * (-len(json_bytes) % 4)
    chunks = struct.pack("<II", len(j), 0x4E4F534A) + j
    if bin_bytes is not None:
        b = bin_bytes + b"\0" * (-len(bin_bytes) % 4)
        chunks += struct.pack("<II", len(b), 0x004E4942) + b
    length = 12 + len(chunks) if total is None else total
    return b"glTF" + struct.pack("<II", version, length) + chunks


def quat(axis, angle):
    s = math.sin(angle / 2)
    return [axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2)]


def base_asset():
    """One animation, four channels: translation LINEAR, rotation LINEAR,
    scale STEP, weights CUBICSPLINE (2 targets), sharing one input."""
    a = Asset()
    mesh = a.morph_mesh(2)
    n0 = a.node()
    n1 = a.node(mesh)
    t = a.floats([0.0, 0.5, 1.25], "SCALAR")
    tr = a.floats([0, 0, 0, 1, 2, 3, -1, 0, 4], "VEC3")
    q = []
    for ang in (0.0, 1.0, 2.5):
        q += quat((0, 0, 1), ang)
    rot = a.floats(q, "VEC4")
    sc = a.floats([1, 1, 1, 2, 2, 2, 0.5, 1, 3], "VEC3")
    w = a.floats([0, 0, 0.2, 0.8, 1, 0] * 3, "SCALAR")  # 3 keys x (a, v, b) x 2 targets
    a.animation(
        [(t, tr, "LINEAR"), (t, rot, "LINEAR"), (t, sc, "STEP"), (t, w, "CUBICSPLINE")],
        [(0, n0, "translation"), (1, n0, "rotation"), (2, n0, "scale"), (3, n1, "weights")],
    )
    return a


def pointer_channel(sampler, pointer):
    return {"sampler": sampler, "target": {"path": "pointer", "extensions": {"KHR_animation_pointer": {"pointer": pointer}}}}


def pointer_asset():
    """KHR_animation_pointer: material 0's base colour (LINEAR), emissive
    strength (CUBICSPLINE) and base colour texture offset (STEP), next to a
    core translation channel on node 0, in one animation."""
    a = Asset()
    n = a.node()
    t = a.floats([0.0, 1.0, 2.0], "SCALAR")
    tr = a.floats([0, 0, 0, 0, 1, 0, 0, 0, 0], "VEC3")
    color = a.floats([0.1, 0.55, 0.9, 1, 0.95, 0.8, 0.1, 1, 0.85, 0.15, 0.35, 1], "VEC4")
    strength = a.floats([0, 0, 0, 0, 2, 0, 0, 0.5, 0], "SCALAR")  # 3 keys x (a, v, b)
    offset = a.floats([0, 0, 0.25, 0.5, 0.5, 1], "VEC2")
    doc = a.doc
    doc["materials"] = [
        {
            "pbrMetallicRoughness": {
                "baseColorFactor": [1, 1, 1, 1],
                "baseColorTexture": {"index": 0, "extensions": {"KHR_texture_transform": {"offset": [0, 0]}}},
            },
            "extensions": {"KHR_materials_emissive_strength": {"emissiveStrength": 1.0}},
        }
    ]
    doc["textures"] = [{"source": 0}]
    doc["images"] = [{"uri": "unused.png"}]
    doc["extensionsUsed"] = ["KHR_animation_pointer", "KHR_texture_transform", "KHR_materials_emissive_strength"]
    doc["animations"].append(
        {
            "name": "material",
            "samplers": [
                {"input": t, "output": tr, "interpolation": "LINEAR"},
                {"input": t, "output": color, "interpolation": "LINEAR"},
                {"input": t, "output": strength, "interpolation": "CUBICSPLINE"},
                {"input": t, "output": offset, "interpolation": "STEP"},
            ],
            "channels": [
                {"sampler": 0, "target": {"node": n, "path": "translation"}},
                pointer_channel(1, "/materials/0/pbrMetallicRoughness/baseColorFactor"),
                pointer_channel(2, "/materials/0/extensions/KHR_materials_emissive_strength/emissiveStrength"),
                pointer_channel(3, "/materials/0/pbrMetallicRoughness/baseColorTexture/extensions/KHR_texture_transform/offset"),
            ],
        }
    )
    return a


def pointer_nodes_asset():
    """KHR_animation_pointer on nodes and beyond: a normalized SHORT
    rotation, morph weights, a KHR_node_visibility bool (UNSIGNED_BYTE,
    STEP), a spot light's intensity and a camera's yfov."""
    a = Asset()
    mesh = a.morph_mesh(2)
    n0 = a.node(mesh)
    n1 = a.node()
    doc = a.doc
    doc["nodes"][n1]["extensions"] = {"KHR_node_visibility": {"visible": True}}
    doc["nodes"][n1]["camera"] = 0
    doc["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.1}}]
    doc["extensions"] = {"KHR_lights_punctual": {"lights": [{"type": "spot", "spot": {}}]}}
    doc["extensionsUsed"] = ["KHR_animation_pointer", "KHR_node_visibility", "KHR_lights_punctual"]
    t = a.floats([0.0, 0.5, 1.0], "SCALAR")
    q = [0, 0, 0, 1, 0, 0, 0.7071, 0.7071, 0, 0, 1, 0]
    rot = a.accessor(b"".join(struct.pack("<h", round(c * 32767)) for c in q), SHORT, 3, "VEC4", normalized=True)
    w = a.floats([0, 1, 0.5, 0.5, 1, 0], "SCALAR")
    vis = a.accessor(bytes([1, 0, 1, 0]), UBYTE, 3, "SCALAR")
    one = a.floats([0, 10, 2], "SCALAR")
    samplers = [(t, rot, "LINEAR"), (t, w, "LINEAR"), (t, vis, "STEP"), (t, one, "LINEAR"), (t, one, "STEP")]
    doc["animations"].append(
        {
            "name": "nodes",
            "samplers": [{"input": i, "output": o, "interpolation": m} for i, o, m in samplers],
            "channels": [
                pointer_channel(0, f"/nodes/{n0}/rotation"),
                pointer_channel(1, f"/nodes/{n0}/weights"),
                pointer_channel(2, f"/nodes/{n1}/extensions/KHR_node_visibility/visible"),
                pointer_channel(3, "/extensions/KHR_lights_punctual/lights/0/intensity"),
                pointer_channel(4, "/cameras/0/perspective/yfov"),
            ],
        }
    )
    return a


def valid_seeds():
    out = {}
    a = base_asset()
    out["valid_base.gltf"] = a.gltf()
    out["valid_base.glb"] = a.glb()

    # Normalized integer rotations and weights, every component type.
    b = Asset()
    mesh = b.morph_mesh(3)
    n = b.node(mesh)
    t = b.floats([0.0, 1.0], "SCALAR")
    samplers, channels = [], []
    for ctype, fmt, scale in ((BYTE, "b", 127), (UBYTE, "B", 255), (SHORT, "h", 32767), (USHORT, "H", 65535)):
        comps = [0, 0, 0, 1, 0, 0.7071, 0, 0.7071]
        if fmt in "BH":
            comps = [abs(c) for c in comps]
        data = b"".join(struct.pack("<" + fmt, round(c * scale)) for c in comps)
        if len(data) % 4:
            data += b"\0" * (-len(data) % 4)
        rot = b.accessor(data, ctype, 2, "VEC4", normalized=True)
        wdata = b"".join(struct.pack("<" + fmt, round(c * scale)) for c in [0, 0.5, 1, 1, 0.5, 0])
        w = b.accessor(wdata, ctype, 6, "SCALAR", normalized=True)
        samplers += [(t, rot, "LINEAR"), (t, w, "STEP")]
        channels += [(len(samplers) - 2, n, "rotation"), (len(samplers) - 1, n, "weights")]
    b.animation(samplers, channels, "normalized")
    out["valid_normalized.glb"] = b.glb()

    # Sparse output over a buffer-view-less accessor, a single-key sampler,
    # a second animation, and input times that start after 0.
    c = Asset()
    n = c.node()
    t = c.floats([0.5, 1.0, 2.0, 4.0], "SCALAR")
    idx = c.view(struct.pack("<HH", 1, 3))
    vals = c.view(f32([5, 5, 5, 7, 7, 7]))
    c.doc["accessors"].append(
        {
            "componentType": FLOAT,
            "count": 4,
            "type": "VEC3",
            "sparse": {
                "count": 2,
                "indices": {"bufferView": idx, "componentType": USHORT},
                "values": {"bufferView": vals},
            },
        }
    )
    sparse = len(c.doc["accessors"]) - 1
    one = c.floats([3.0], "SCALAR")
    q = c.floats([0, 0.6, 0, 0.8], "VEC4")
    c.animation([(t, sparse, "LINEAR"), (one, q, "STEP")], [(0, n, "translation"), (1, n, "rotation")], "sparse")
    c.animation([(one, q, "LINEAR")], [(0, n, "rotation")], "single")
    out["valid_sparse.gltf"] = c.gltf()
    out["valid_sparse.glb"] = c.glb()

    # Interleaved (strided) translation and scale.
    d = Asset()
    n = d.node()
    t = d.floats([0.0, 1.0], "SCALAR")
    inter = f32([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    v = d.view(inter, stride=24)
    d.doc["accessors"] += [
        {"bufferView": v, "byteOffset": 0, "componentType": FLOAT, "count": 2, "type": "VEC3"},
        {"bufferView": v, "byteOffset": 12, "componentType": FLOAT, "count": 2, "type": "VEC3"},
    ]
    na = len(d.doc["accessors"])
    d.animation([(t, na - 2, "STEP"), (t, na - 1, "LINEAR")], [(0, n, "translation"), (1, n, "scale")])
    out["valid_strided.glb"] = d.glb()

    p = pointer_asset()
    out["valid_pointer_material.gltf"] = p.gltf()
    out["valid_pointer_material.glb"] = p.glb()
    out["valid_pointer_nodes.glb"] = pointer_nodes_asset().glb()
    return out


def broken_seeds():
    out = {}
    a = base_asset()
    good_glb = a.glb()
    doc = a.json_doc(None)
    jbytes = json.dumps(doc, separators=(",", ":")).encode()

    def mutated(name, fn, container="glb"):
        d = copy.deepcopy(doc)
        if container != "glb":
            # The buffer as a data URI, unless the mutation sets its own.
            d["buffers"][0]["uri"] = "data:application/octet-stream;base64," + base64.b64encode(bytes(a.bin)).decode()
        fn(d)
        if container == "glb":
            out[name + ".glb"] = a.glb(d)
        else:
            out[name + ".gltf"] = a.gltf(d)

    # The container.
    out["glb_truncated_header.glb"] = good_glb[:10]
    out["glb_truncated_body.glb"] = good_glb[: len(good_glb) // 2]
    out["glb_version1.glb"] = glb(jbytes, bytes(a.bin), version=1)
    out["glb_length_too_big.glb"] = glb(jbytes, bytes(a.bin), total=len(good_glb) + 1000)
    out["glb_length_too_small.glb"] = glb(jbytes, bytes(a.bin), total=8)
    bad_chunk = bytearray(good_glb)
    struct.pack_into("<I", bad_chunk, 12, 0xFFFFFFF0)
    out["glb_chunk_length_huge.glb"] = bytes(bad_chunk)
    out["glb_no_bin.glb"] = glb(jbytes, None)
    out["glb_bin_first.glb"] = b"glTF" + struct.pack("<II", 2, 12 + 8 + 4) + struct.pack("<II", 4, 0x004E4942) + b"\0" * 4

    # JSON.
    out["json_not_json.gltf"] = b"this is not json {"
    out["json_not_gltf.gltf"] = b'{"hello": "world", "numbers": [1, 2, 3]}'
    out["json_array.gltf"] = b"[1, 2, 3]"
    out["json_deep.gltf"] = b"[" * 5000 + b"]" * 5000
    out["json_no_animations.gltf"] = json.dumps({"asset": {"version": "2.0"}}).encode()
    mutated("json_asset_missing", lambda d: d.pop("asset"))

    # Ranges and sizes.
    mutated("view_past_buffer", lambda d: d["bufferViews"][0].update(byteLength=10_000))
    mutated("view_offset_huge", lambda d: d["bufferViews"][0].update(byteOffset=2**64 - 8))
    mutated("accessor_past_view", lambda d: d["accessors"][1].update(byteOffset=64))
    mutated("accessor_count_4e9", lambda d: d["accessors"][1].update(count=4_000_000_000))
    mutated("accessor_count_overflow", lambda d: d["accessors"][4].update(count=2**63))
    mutated("buffer_bytelength_1e15", lambda d: d["buffers"][0].update(byteLength=10**15))
    mutated("stride_too_small", lambda d: d["bufferViews"][d["accessors"][2]["bufferView"]].update(byteStride=4))
    mutated("stride_not_multiple", lambda d: d["bufferViews"][1].update(byteStride=253))

    def unbacked_huge(d):
        del d["accessors"][4]["bufferView"]
        d["accessors"][4]["count"] = 4_000_000_000

    mutated("unbacked_huge", unbacked_huge)

    # Indices out of range.
    mutated("index_accessor", lambda d: d["animations"][0]["samplers"][0].update(input=99))
    mutated("index_node", lambda d: d["animations"][0]["channels"][0]["target"].update(node=1_000_000))
    mutated("index_sampler", lambda d: d["animations"][0]["channels"][0].update(sampler=7))
    mutated("index_buffer", lambda d: d["bufferViews"][0].update(buffer=3))
    mutated("index_view", lambda d: d["accessors"][1].update(bufferView=42))
    mutated("index_mesh", lambda d: d["nodes"][1].update(mesh=9))

    # Track contents (patched in the binary buffer of a .glb copy).
    def patched(name, view_index, floats):
        b = bytearray(a.bin)
        off = doc["bufferViews"][view_index]["byteOffset"]
        b[off : off + 4 * len(floats)] = f32(floats)
        out[name + ".glb"] = a.glb(doc, bytes(b))

    times_view = doc["accessors"][1]["bufferView"]
    rot_view = doc["accessors"][3]["bufferView"]
    patched("times_not_increasing", times_view, [0.0, 0.5, 0.5])
    patched("times_decreasing", times_view, [1.0, 0.5, 0.0])
    patched("times_nan", times_view, [0.0, float("nan"), 1.0])
    patched("times_inf", times_view, [0.0, 0.5, float("inf")])
    patched("values_nan", rot_view, [float("nan"), 0, 0, 1])
    patched("quat_zero", rot_view, [0, 0, 0, 0])
    patched("quat_not_unit", rot_view, [0, 0, 0, 2])

    # Samplers and channels.
    mutated("interp_unknown", lambda d: d["animations"][0]["samplers"][0].update(interpolation="QUADRATIC"))
    mutated("path_unknown", lambda d: d["animations"][0]["channels"][0]["target"].update(path="color"))
    mutated("cubic_count_not_3x", lambda d: d["animations"][0]["samplers"][0].update(interpolation="CUBICSPLINE"))

    def weights_count(d):
        d["meshes"][0]["weights"] = [0.0] * 3
        d["meshes"][0]["primitives"][0]["targets"] = [{"POSITION": 0}] * 3

    mutated("weights_count", weights_count)
    mutated("weights_no_mesh", lambda d: d["animations"][0]["channels"][3]["target"].update(node=0))
    mutated("input_not_float", lambda d: d["accessors"][1].update(componentType=UBYTE))
    mutated("output_wrong_type", lambda d: d["accessors"][2].update(type="VEC2"))

    # Extensions and URIs.
    mutated("ext_required", lambda d: d.update(extensionsRequired=["KHR_draco_mesh_compression"], extensionsUsed=["KHR_draco_mesh_compression"]))
    mutated("uri_not_base64", lambda d: d["buffers"][0].update(uri="data:application/octet-stream;base64,@@@@"), "gltf")
    mutated("uri_not_base64_header", lambda d: d["buffers"][0].update(uri="data:text/plain,hello"), "gltf")
    mutated("uri_missing_file", lambda d: d["buffers"][0].update(uri="missing.bin"), "gltf")
    mutated("uri_http", lambda d: d["buffers"][0].update(uri="https://example.com/a.bin"), "gltf")
    # Escapes from the asset root (the fuzz target's base folder holds a
    # buffer.bin), and URIs that stay inside it.
    for name, uri in [
        ("uri_parent", "../buffer.bin"),
        ("uri_parent_encoded", "%2e%2e/buffer.bin"),
        ("uri_parent_nested", "sub/../../buffer.bin"),
        ("uri_backslash", "..\\buffer.bin"),
        ("uri_absolute", "/etc/hostname"),
        ("uri_file_scheme", "file:///etc/hostname"),
        ("uri_nul", "buffer.bin%00"),
        ("uri_inside", "buffer.bin"),
        ("uri_inside_dotted", "sub/../buffer.bin"),
    ]:
        mutated(name, lambda d, uri=uri: d["buffers"][0].update(uri=uri), "gltf")

    # CUBICSPLINE with one key.
    c = Asset()
    n = c.node()
    one = c.floats([0.0], "SCALAR")
    v = c.floats([0, 0, 0, 1, 1, 1, 0, 0, 0], "VEC3")
    c.animation([(one, v, "CUBICSPLINE")], [(0, n, "translation")])
    out["cubic_one_key.glb"] = c.glb()

    # KHR_animation_pointer, each seed breaking one rule of the material
    # seed: a pointer past the materials, a pointer channel without its
    # extension object, the same property twice (a pointer and a core
    # channel on node 0's translation).
    p = pointer_asset()
    pdoc = p.json_doc(None)

    def pointer_mutated(name, fn):
        d = copy.deepcopy(pdoc)
        fn(d["animations"][0]["channels"])
        out[name + ".glb"] = p.glb(d)

    pointer_mutated(
        "pointer_unresolved",
        lambda ch: ch[1]["target"]["extensions"]["KHR_animation_pointer"].update(pointer="/materials/7/pbrMetallicRoughness/baseColorFactor"),
    )
    pointer_mutated("pointer_extension_missing", lambda ch: ch[2]["target"].pop("extensions"))
    pointer_mutated("pointer_twice", lambda ch: ch.append(pointer_channel(0, "/nodes/0/translation")))
    return out


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "fuzz", "corpus", "import")
    os.makedirs(out_dir, exist_ok=True)
    seeds = {**valid_seeds(), **broken_seeds()}
    for name, data in sorted(seeds.items()):
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(data)
    print(f"wrote {len(seeds)} seed files to {os.path.normpath(out_dir)}")


if __name__ == "__main__":
    main()
