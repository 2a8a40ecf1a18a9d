// SPDX-License-Identifier: MIT
// Polymarket's deposit-wallet factory and beacon for the local chain. The factory deploys one
// Solady-LibClone ERC1967BeaconProxy per owner with CREATE2, so a wallet's address is the one
// the official SDK derives (py-sdk _beacon_deposit_init_code_hash): salt = keccak256(args),
// args = abi.encode(factory, bytes32(owner)), init code = the clone's fixed bytes + args.
pragma solidity ^0.8.24;

import {DepositWallet} from "./DepositWallet.sol";

/// The beacon every wallet clone asks for its logic; its admin may point it elsewhere.
contract DepositWalletBeacon {
    address public implementation;
    address public immutable admin;

    event Upgraded(address indexed implementation);

    constructor(address implementation_) {
        implementation = implementation_;
        admin = msg.sender;
        emit Upgraded(implementation_);
    }

    function upgradeTo(address implementation_) external {
        require(msg.sender == admin, "DepositWalletBeacon: not admin");
        implementation = implementation_;
        emit Upgraded(implementation_);
    }
}

contract DepositWalletFactory {
    address public immutable beacon;
    address public immutable admin;
    /// The relayer's address: only it serves WALLET-CREATE, as on Polygon.
    address public operator;

    event WalletDeployed(address indexed owner, address indexed wallet);
    event OperatorChanged(address indexed operator);

    constructor(address beacon_, address operator_) {
        beacon = beacon_;
        admin = msg.sender;
        operator = operator_;
        emit OperatorChanged(operator_);
    }

    /// Selector 0x49493a4d, which the SDKs call to tell a beacon factory from a UUPS one.
    function BEACON() external view returns (address) {
        return beacon;
    }

    function setOperator(address operator_) external {
        require(msg.sender == admin, "DepositWalletFactory: not admin");
        operator = operator_;
        emit OperatorChanged(operator_);
    }

    /// Deploy `owner`'s wallet (the relayer's WALLET-CREATE); returns its address.
    function deploy(address owner) external returns (address wallet) {
        require(msg.sender == operator, "DepositWalletFactory: not the operator");
        require(owner != address(0), "DepositWalletFactory: zero owner");
        bytes memory args = _args(owner);
        bytes memory code = _initCode(args);
        bytes32 salt = keccak256(args);
        assembly {
            wallet := create2(0, add(code, 0x20), mload(code), salt)
        }
        require(wallet != address(0), "DepositWalletFactory: already deployed");
        emit WalletDeployed(owner, wallet);
    }

    /// Relay a signed batch to one of this factory's wallets (a relayer WALLET submission goes
    /// `to` the factory); the wallet checks the signature, nonce and deadline.
    function execute(DepositWallet wallet, DepositWallet.Batch calldata batch, bytes calldata signature)
        external
        payable
    {
        require(address(wallet).code.length > 0, "DepositWalletFactory: wallet not deployed");
        require(wallet.factory() == address(this), "DepositWalletFactory: not our wallet");
        wallet.execute{value: msg.value}(batch, signature);
    }

    /// The address `owner`'s wallet has (or will have).
    function predictWalletAddress(address owner) external view returns (address) {
        bytes memory args = _args(owner);
        bytes32 hash = keccak256(abi.encodePacked(bytes1(0xff), address(this), keccak256(args), keccak256(_initCode(args))));
        return address(uint160(uint256(hash)));
    }

    function _args(address owner) private view returns (bytes memory) {
        return abi.encode(address(this), bytes32(uint256(uint160(owner))));
    }

    /// LibClone.initCodeERC1967BeaconProxy(beacon, args), byte for byte.
    function _initCode(bytes memory args) private view returns (bytes memory) {
        return abi.encodePacked(
            // PUSH2 runtime length: the 0x52-byte proxy plus the args
            bytes3(uint24(0x610052 + args.length)),
            hex"3d8160233d3973",
            beacon,
            hex"60195155f3363d3d373d3d363d602036600436635c60da",
            hex"1b60e01b36527fa3f0ad74e5423aebfd80d3ef4346578335a9a72aeaee59ff6c",
            hex"b3582b35133d50545afa5036515af43d6000803e604d573d6000fd5b3d6000f3",
            args
        );
    }
}
