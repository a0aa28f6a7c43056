"""bfloat16 (a zarr-extensions data type that tensorstore writes) with tensorstore, both ways.

.npy has no bfloat16, so zarrkit reads and writes it through `zarrkit cp`: it decodes every
chunk of tensorstore's array and encodes it again. tensorstore must read zarrkit's copy back
bit for bit (NaN, infinities, -0 and subnormals included), and uncompressed chunks must be
byte-identical to tensorstore's own.
"""

import ml_dtypes
import numpy as np
import pytest
import tensorstore as ts

from zk_interop import v3_metadata

SHAPE = (9, 7)
CHUNKS = (4, 3)


def bf16_values():
    rng = np.random.default_rng(16)
    values = (rng.standard_normal(SHAPE) * 1000).astype(ml_dtypes.bfloat16)
    special = [np.nan, np.inf, -np.inf, -0.0, 1e-40, -3e38, 1.0, 0.5]  # 1e-40: a subnormal
    values.reshape(-1)[: len(special)] = np.array(special, dtype=np.float32).astype(ml_dtypes.bfloat16)
    values[5:, 3:] = 1.5  # chunks of nothing but the fill value: not stored
    return values


def ts_write(path, values, codecs):
    array = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)},
                     "metadata": {"shape": list(values.shape), "data_type": "bfloat16", "fill_value": 1.5,
                                  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(CHUNKS)}},
                                  "codecs": codecs}},
                    create=True, delete_existing=True).result()
    array.write(values).result()


def ts_read(path):
    return ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}).result().read().result()


def chunk_files(path):
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()
            and p.name != "zarr.json"}


LITTLE = {"name": "bytes", "configuration": {"endian": "little"}}
BIG = {"name": "bytes", "configuration": {"endian": "big"}}


@pytest.mark.parametrize("codecs", [[LITTLE], [BIG], [LITTLE, {"name": "zstd", "configuration": {"level": 1}}]],
                         ids=["little", "big", "zstd"])
def test_bfloat16_read_and_written_by_zarrkit(tmp_path, zarrkit, codecs):
    values = bf16_values()
    ts_write(tmp_path / "ts.zarr", values, codecs)
    assert "bfloat16" in zarrkit.run("info", tmp_path / "ts.zarr").stdout
    zarrkit.run("cp", tmp_path / "ts.zarr", tmp_path / "copy.zarr", "--codec", "none")
    metadata = v3_metadata(tmp_path / "copy.zarr")
    assert metadata["data_type"] == "bfloat16"
    assert metadata["fill_value"] == 1.5
    back = ts_read(tmp_path / "copy.zarr")
    assert back.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(back.view(np.uint16), values.view(np.uint16))
    if codecs == [LITTLE]:
        ours, theirs = chunk_files(tmp_path / "copy.zarr"), chunk_files(tmp_path / "ts.zarr")
        assert ours == theirs, "zarrkit's bfloat16 chunks differ from tensorstore's"
