from setuptools import find_packages, setup

setup(
    name="open-r1",
    packages=find_packages("src"),
    package_dir={"": "src"},
    install_requires=[
        "accelerate>=1.2.1",
        "transformers>=4.48.2",
        "trl==0.15.0",
    ],
)
