"""Top-down map images: orientation, block colours, mobs and trajectories."""

import numpy as np
import pytest

from mrsteve.world.content import load_content
from mrsteve.world.topdown import EMPTY_COLOR, save_top_down, top_down_image

CONTENT = load_content()
DIRT, WATER, STONE = (CONTENT.block(n).id for n in ("dirt", "water", "stone"))
SEM = CONTENT.semantic_id


def world(size_x=20, size_z=12):
    blocks = np.zeros((size_x, 16, size_z), dtype=np.uint8)
    blocks[:, :4, :] = DIRT
    return blocks


def test_shape_and_orientation_x_right_z_down():
    blocks = world()
    blocks[17, 4:6, 2] = STONE  # large x, small z: the upper right
    image = top_down_image(blocks, scale=3)
    assert image.shape == (12 * 3, 20 * 3, 3) and image.dtype == np.uint8
    stone = CONTENT.block_colors[STONE, 0]
    cell = image[2 * 3 : 3 * 3, 17 * 3 : 18 * 3].reshape(-1, 3).astype(int)
    assert np.abs(cell - stone).max() < 60  # the stone's grey, up to height shading
    assert np.abs(image[0:3, 0:3].astype(int) - stone).max() > 30  # not the dirt's column


def test_water_column_shows_water_colour_and_empty_columns_black():
    blocks = world()
    blocks[5, 3, 6] = WATER  # the top block of that column
    blocks[0, :, 0] = 0
    image = top_down_image(blocks, scale=1)
    red, green, blue = image[6, 5].astype(int)
    assert blue > red + 60 and blue > green + 40
    assert tuple(image[0, 0]) == EMPTY_COLOR


def test_trajectory_and_mobs_are_drawn():
    blocks = world(40, 40)
    plain = top_down_image(blocks, scale=4)
    path = np.array([[5.0, 5.0], [30.0, 5.0], [30.0, 30.0]])
    cow = CONTENT.mob("cow")
    mobs = np.array([[10.0, 4.0, 20.0, cow.width, cow.height, SEM("cow")]], dtype=np.float32)
    image = top_down_image(blocks, mobs=mobs, trajectory=path, scale=4, trajectory_color=(255, 0, 255))
    magenta = np.all(image == (255, 0, 255), axis=-1)
    # The path runs along row z = 5 from x = 5 to 30, then down column x = 30 to z = 30.
    assert magenta[5 * 4, 5 * 4 : 30 * 4].all()
    assert magenta[5 * 4 : 30 * 4, 30 * 4].all()
    assert magenta.sum() < 60 * 4 * 2  # one pixel wide
    assert tuple(image[20 * 4, 10 * 4]) == cow.color
    assert tuple(plain[20 * 4, 10 * 4]) != cow.color
    rows, cols = np.indices(magenta.shape)
    near_cow = np.hypot(rows - 20 * 4, cols - 10 * 4) <= 8
    untouched = ~magenta & ~near_cow
    assert np.array_equal(image[untouched], plain[untouched])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"scale": 0},
        {"scale": 2.5},
        {"trajectory": np.zeros((4, 3))},
        {"mobs": np.zeros((1, 5), np.float32)},
        {"mobs": np.array([[1, 4, 1, 1, 1, 0]], np.float32)},
    ],
)
def test_bad_input_raises(kwargs):
    with pytest.raises(ValueError):
        top_down_image(world(), **kwargs)


def test_save_top_down_writes_a_png(tmp_path):
    path = save_top_down(tmp_path / "maps" / "map.png", world(), trajectory=np.array([[1.0, 1.0]]),
                         title="a map")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
