"""The camera's geometry (mrsteve.world.camera) and the environment handing it out."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.env import make_env
from mrsteve.world.camera import (
    DEFAULT_FOV_DEG,
    EYE_HEIGHT,
    Camera,
    basis_matrix,
    camera_rays,
    look_direction,
)
from mrsteve.world.physics import EYE_HEIGHT as PHYSICS_EYE_HEIGHT


@pytest.mark.parametrize(("yaw", "pitch"), [(0.0, 0.0), (90.0, 0.0), (-135.0, 30.0), (20.0, -60.0)])
def test_the_basis_is_orthonormal_with_forward_the_look_direction(yaw, pitch):
    basis = basis_matrix(yaw, pitch)
    np.testing.assert_allclose(basis @ basis.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(basis[2], look_direction(yaw, pitch), atol=1e-12)
    np.testing.assert_allclose(np.cross(basis[0], basis[2]), basis[1], atol=1e-12)  # up
    assert basis[0, 1] == 0.0  # right stays level


def test_minecraft_angles():
    np.testing.assert_allclose(look_direction(0.0, 0.0), (0.0, 0.0, 1.0), atol=1e-12)  # +z
    np.testing.assert_allclose(look_direction(90.0, 0.0), (-1.0, 0.0, 0.0), atol=1e-12)  # -x
    assert look_direction(0.0, 45.0)[1] < 0  # positive pitch looks down
    np.testing.assert_allclose(basis_matrix(0.0, 0.0)[0], (-1.0, 0.0, 0.0), atol=1e-12)


def test_rays_pass_through_pixel_centres_within_the_vertical_field_of_view():
    camera = Camera(30, 40, 70.0)
    rays = camera.rays.reshape(30, 40, 3)
    np.testing.assert_allclose(np.linalg.norm(rays, axis=-1), 1.0, atol=1e-6)
    columns, rows = camera.view_angles
    assert rows[0] == pytest.approx(-rows[-1]) and columns[0] == pytest.approx(-columns[-1])
    half_pixel = 0.5 * 2 * camera.tan_half / 30
    assert np.degrees(np.arctan(camera.tan_half - half_pixel)) == pytest.approx(rows[0], abs=1e-4)
    np.testing.assert_array_equal(camera.rays, camera_rays(30, 40, 70.0))
    row, col = camera.project(rays[7, 11, 0] / rays[7, 11, 2], rays[7, 11, 1] / rays[7, 11, 2])
    assert (row, col) == pytest.approx((7.0, 11.0), abs=1e-4)  # project inverts the rays


def test_a_camera_checks_its_field_of_view_and_is_frozen():
    with pytest.raises(ValueError, match="fov_deg"):
        Camera(10, 10, 180.0)
    camera = Camera(10, 10)
    assert camera.fov_deg == DEFAULT_FOV_DEG == 70.0
    with pytest.raises(AttributeError):
        camera.fov_deg = 60.0


def test_the_environment_hands_out_the_camera_it_renders_with():
    env = make_env(world="flat", obs_size=(24, 32), fov_deg=60.0)
    obs, info = env.reset(seed=0)
    assert info["camera"] is env.unwrapped.camera
    assert info["camera"] == Camera(24, 32, 60.0)
    assert obs["depth"].shape == info["camera"].shape
    assert EYE_HEIGHT == PHYSICS_EYE_HEIGHT == 1.62
